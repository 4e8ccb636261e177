import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { backup, restore, RestoreRefused } from '../src/admin/backup';
import { main } from '../src/cli';
import { MIGRATIONS } from '../src/database/migrations';
import { captureStdout } from './helpers/stdout';
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
  environments: unknown;
}

/** A project with two commits (files API), an issue, an environment and a second user: the state to carry over. */
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
  await t.http
    .post(`/api/v3/projects/${id}/environments`)
    .set('PRIVATE-TOKEN', t.root.token)
    .send({ name: 'review/kept', external_url: 'https://kept.example.com' })
    .expect(201);
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
    // the slug is generated with a random suffix: the same after the restore only if the row was carried over
    environments: await get(`/api/v3/projects/${id}/environments`),
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

/** A page pushed into the bare wiki repository `wikiDir` straight from a local work tree. */
function pushWikiPage(wikiDir: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-wiki-page-'));
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { env });
  try {
    git('init', '-q', '-b', 'master');
    writeFileSync(join(dir, 'home.md'), '# Home\n');
    git('add', 'home.md');
    git('commit', '-qm', 'Create home');
    git('push', '-q', wikiDir, 'master');
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
    const gitService = t.app.app.get((await import('../src/git/git.service')).GitService);
    const repoPath = gitService.repositoryPath(id);
    const clonedBefore = cloneFiles(repoPath);
    // the project's wiki (its own repository beside the project's) is carried over too
    await gitService.ensureWiki(id);
    pushWikiPage(gitService.wikiPath(id));
    const wikiBefore = cloneFiles(gitService.wikiPath(id));
    // taken while the server runs on PostgreSQL; on the embedded default the server is stopped first
    if (!onPostgres) await t.app.close();
    const src = await openDatabase(t.config, { migrate: false });
    // it holds the secret key, host keys and password hashes: 0600 from its creation, whatever the
    // umask (0 here), also over an existing world-readable file; nothing readable appears meanwhile
    writeFileSync(file, 'an older backup', { mode: 0o644 });
    const seen: string[] = [];
    const watcher = watch(work, (_e, name) => {
      if (!name) return;
      stat(join(work, name)).then(
        (st) => seen.push(`${name}: ${(st.mode & 0o777).toString(8)}`),
        () => undefined, // renamed or removed meanwhile
      );
    });
    const umask = process.umask(0);
    let made: Awaited<ReturnType<typeof backup>>;
    try {
      made = await backup(t.config, src.dataSource, file);
    } finally {
      process.umask(umask);
      await new Promise((r) => setTimeout(r, 200));
      watcher.close();
    }
    await src.close();
    expect(made.repositories).toBe(2); // the project's and its wiki's
    expect(made.rows).toBeGreaterThan(5);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((l) => !l.endsWith(': 600'))).toEqual([]);
    expect(execFileSync('ls', ['-A', work], { encoding: 'utf8' }).trim()).toBe('backup.tar.gz'); // no partial file left

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
      expect(r.repositories).toBe(2);
      // the counts say what was copied: not schema_migrations (this version's migrations made it) nor
      // the derived project_authorizations, rebuilt from the copied memberships to the same rows
      expect(r.migrations).toBe(MIGRATIONS.length);
      expect(r.derived).toEqual([{ name: 'project_authorizations', rows: expect.any(Number), inBackup: expect.any(Number) }]);
      expect(r.derived[0].rows).toBeGreaterThan(0);
      expect(r.derived[0].rows).toBe(r.derived[0].inBackup);
      expect(r.tables).toBe(made.tables - 2);
      expect(r.rows).toBe(made.rows - r.migrations - r.derived[0].inBackup);
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
      expect(cloneFiles(app.app.get(GitService).wikiPath(id))).toBe(wikiBefore);
      expect(wikiBefore).toContain('home.md');
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
  const stdout = captureStdout();

  it('the CLI says the file is 0600 and why, and what restore copied and what it rebuilt', async () => {
    const dirs = [1, 2].map(() => mkdtempSync(join(tmpdir(), 'glv3-backup-cli-')));
    const file = join(dirs[0], 'out', 'b.tar.gz');
    const saved = { ...process.env };
    const env = (dir: string) =>
      Object.assign(process.env, { DATA_DIR: dir, DATABASE_URL: '', EMBEDDED_DB_DIR: join(dir, 'db'), LOG_LEVEL: 'silent', SECRET_KEY, SSH_ENABLED: 'false' });
    try {
      env(dirs[0]);
      expect(await main(['create-admin', '--username', 'boss', '--email', 'boss@example.com', '--password', 'a-long-password-1'])).toBe(0);
      stdout.clear();
      expect(await main(['backup', '--file', file])).toBe(0);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(stdout.text).toMatch(/^backup written to .*b\.tar\.gz: \d+ tables, \d+ rows, 0 repositories\n/);
      expect(stdout.text).toContain(
        'mode 0600 (its owner only, from its creation): it holds the secret key, the SSH host private keys and the password hashes; keep it as private as DATA_DIR',
      );
      const tables = Number(/: (\d+) tables/.exec(stdout.text)![1]);
      env(dirs[1]);
      stdout.clear();
      expect(await main(['restore', '--file', file])).toBe(0);
      expect(stdout.text.split('\n')).toEqual([
        `restored from ${file}:`,
        expect.stringMatching(new RegExp(`^ {2}copied: ${tables - 2} tables, [1-9]\\d* rows$`)),
        expect.stringMatching(/^ {2}rebuilt from the copied rows, not copied: project_authorizations \(0 rows now; 0 in the backup\)$/),
        `  not copied: schema_migrations (this version's migrations made the schema; the backup had ${MIGRATIONS.length} applied)`,
        '  repositories: 0',
        '',
      ]);
    } finally {
      process.env = saved;
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  }, 120_000);

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
