import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { backup, restore, RestoreRefused } from '../src/admin/backup';
import { createApp } from '../src/app.factory';
import { AppConfig, loadConfig } from '../src/config/config';
import { openDatabase } from '../src/database/data-source';
import { startTestApp, TestApp } from './helpers/test-app';
import { createTestDatabase } from './helpers/test-db';

const SECRET_KEY = 'test-secret-key-test-secret-key-0123456789';

interface Snapshot {
  project: unknown;
  issues: unknown;
  tree: unknown;
  commits: unknown;
  users: unknown;
}

/** A project with two commits (files API), an issue and a second user: the state to carry over. */
async function seed(t: TestApp): Promise<number> {
  const project = await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', t.root.token).send({ name: 'kept' }).expect(201);
  const id = project.body.id as number;
  for (const [path, content] of [
    ['README.md', '# kept\n'],
    ['src/a.txt', 'a\n'],
  ]) {
    await t.http
      .post(`/api/v3/projects/${id}/repository/files`)
      .set('PRIVATE-TOKEN', t.root.token)
      .send({ file_path: path, branch_name: 'master', content, commit_message: `add ${path}` })
      .expect(201);
  }
  await t.http.post(`/api/v3/projects/${id}/issues`).set('PRIVATE-TOKEN', t.root.token).send({ title: 'carried over', labels: 'bug' }).expect(201);
  await t.createUser({ username: 'kept-user', email: 'kept@example.com' });
  return id;
}

async function snapshot(http: ReturnType<typeof request>, token: string, id: number): Promise<Snapshot> {
  const get = async (url: string) => (await http.get(url).set('PRIVATE-TOKEN', token).expect(200)).body;
  const strip = (p: Record<string, unknown>) => ({ ...p, last_activity_at: undefined });
  return {
    project: strip(await get(`/api/v3/projects/${id}`)),
    issues: await get(`/api/v3/projects/${id}/issues`),
    tree: await get(`/api/v3/projects/${id}/repository/tree?recursive=1`),
    commits: await get(`/api/v3/projects/${id}/repository/commits`),
    users: await get(`/api/v3/users`),
  };
}

function cloneFiles(dataDirUrl: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-clone-'));
  try {
    execFileSync('git', ['clone', '--quiet', dataDirUrl, join(dir, 'c')], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
    return execFileSync('git', ['-C', join(dir, 'c'), 'log', '--format=%H %s', '--name-only'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function roundTrip(source: Record<string, string>, target: (dataDir: string) => Promise<{ env: Record<string, string>; drop?: () => Promise<void> }>) {
  const t = await startTestApp(source);
  const onPostgres = !!t.config.databaseUrl;
  const work = mkdtempSync(join(tmpdir(), 'glv3-backup-test-'));
  const restoredDir = mkdtempSync(join(tmpdir(), 'glv3-restored-'));
  const file = join(work, 'backup.tar.gz');
  let drop: (() => Promise<void>) | undefined;
  try {
    const id = await seed(t);
    const before = await snapshot(t.http, t.root.token, id);
    const repoPath = t.app.app.get((await import('../src/git/git.service')).GitService).repositoryPath(id);
    const clonedBefore = cloneFiles(repoPath);
    // taken while the server runs on PostgreSQL; on the embedded default the server is stopped first
    if (!onPostgres) await t.app.close();
    const src = await openDatabase(t.config, { migrate: false });
    const made = await backup(t.config, src.dataSource, file);
    await src.close();
    expect(made.repositories).toBe(1);
    expect(made.rows).toBeGreaterThan(5);

    const tgt = await target(restoredDir);
    drop = tgt.drop;
    const config: AppConfig = loadConfig({
      DATA_DIR: restoredDir,
      LOG_LEVEL: 'silent',
      SECRET_KEY,
      EXTERNAL_URL: 'http://gitlab.test',
      SSH_ENABLED: 'false',
      ...tgt.env,
    });
    const db = await openDatabase(config, { migrate: false });
    try {
      const r = await restore(config, db.dataSource, file);
      expect(r.repositories).toBe(1);
      // a second restore over the data is refused without --force
      await expect(restore(config, db.dataSource, file)).rejects.toBeInstanceOf(RestoreRefused);
      const again = await restore(config, db.dataSource, file, { force: true });
      expect(again.rows).toBe(r.rows);
    } finally {
      await db.close();
    }

    const app = await createApp(config);
    try {
      const http = request(app.app.getHttpServer());
      // the old private token still works: the rows and the secret key came back together
      const after = await snapshot(http, t.root.token, id);
      expect(after).toEqual(before);
      const { GitService } = await import('../src/git/git.service');
      expect(cloneFiles(app.app.get(GitService).repositoryPath(id))).toBe(clonedBefore);
      // ids continue after the restored ones
      const next = await http.post('/api/v3/projects').set('PRIVATE-TOKEN', t.root.token).send({ name: 'after-restore' }).expect(201);
      expect(next.body.id).toBeGreaterThan(id);
      const issue = await http.post(`/api/v3/projects/${id}/issues`).set('PRIVATE-TOKEN', t.root.token).send({ title: 'next' }).expect(201);
      expect(issue.body.iid).toBe(2);
    } finally {
      await app.close();
    }
  } finally {
    if (onPostgres) await t.close();
    else rmSync(t.config.dataDir, { recursive: true, force: true });
    if (drop) await drop();
    rmSync(work, { recursive: true, force: true });
    rmSync(restoredDir, { recursive: true, force: true });
  }
}

describe('admin CLI backup and restore', () => {
  it('round trip on the embedded default: same API answers, same clone, tokens still valid', async () => {
    const dbDir = mkdtempSync(join(tmpdir(), 'glv3-embedded-src-'));
    try {
      await roundTrip({ DATABASE_URL: '', EMBEDDED_DB_DIR: join(dbDir, 'db') }, async (dataDir) => ({
        env: { DATABASE_URL: '', EMBEDDED_DB_DIR: join(dataDir, 'db') },
      }));
    } finally {
      rmSync(dbDir, { recursive: true, force: true });
    }
  }, 180_000);

  const pg = process.env.DATABASE_URL;
  (pg ? it : it.skip)(
    'round trip on PostgreSQL, taken while the server runs (skipped without DATABASE_URL)',
    async () => {
      const target = await createTestDatabase({ empty: true }); // the restore brings the tables
      await roundTrip({}, async () => ({ env: { DATABASE_URL: target.url }, drop: target.release }));
    },
    180_000,
  );
});
