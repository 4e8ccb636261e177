import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request, { type Test } from 'supertest';
import { backup, restore } from '../src/admin/backup';
import { createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/config';
import { openDatabase } from '../src/database/data-source';
import { createTestDatabase } from './helpers/test-db';
import { binaryParser, GitCli } from './helpers/git-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const LIMIT = 4096;

type Json = Record<string, any>;

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Every file below `dir` (relative paths); none when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1));
}

/**
 * Git LFS over HTTP (issue 39 item 3, GitLab CE 8.17's LfsApiController / LfsStorageController /
 * LfsRequest and spec/requests/lfs_http_spec.rb): the stock git-lfs client pushes and clones, the batch
 * API's answers and errors, the object store's checks (oid, size, limit, truncation), who may download
 * and upload, forks and deletion.
 */
describe('Git LFS over HTTP', () => {
  let t: TestApp;
  let cli: GitCli;
  let tmp: string;
  let alice: TestUser; // owner
  let bob: TestUser; // developer
  let carol: TestUser; // reporter
  let gina: TestUser; // guest
  let dave: TestUser; // non-member
  let priv: Json;
  let pub: Json;
  let lfsDir: string;
  let tmpDir: string;

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  const batch = (path: string, body: unknown, auth?: string) => {
    const r = t.http
      .post(`/${path}.git/info/lfs/objects/batch`)
      .set('Content-Type', 'application/vnd.git-lfs+json')
      .set('Accept', 'application/vnd.git-lfs+json');
    if (auth) r.set('Authorization', auth);
    return r.send(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const put = (path: string, oid: string, size: number, body: Buffer, auth?: string) => {
    const r = t.http.put(`/${path}.git/gitlab-lfs/objects/${oid}/${size}`).set('Content-Type', 'application/octet-stream');
    if (auth) r.set('Authorization', auth);
    return r.send(body);
  };
  const get = (path: string, oid: string, auth?: string) => {
    const r = t.http.get(`/${path}.git/gitlab-lfs/objects/${oid}`).buffer(true).parse(binaryParser);
    if (auth) r.set('Authorization', auth);
    return r;
  };
  const auth = (u: TestUser) => basic(u.username, u.token);

  let dirSeq = 0;
  const newDir = (name: string) => {
    const d = join(tmp, `${++dirSeq}-${name}`);
    mkdirSync(d, { recursive: true });
    return d;
  };

  async function createProject(owner: TestUser, name: string, visibility: number): Promise<Json> {
    return (
      await as(owner, t.http.post(`${API}/projects`))
        .send({ name, visibility_level: visibility })
        .expect(201)
    ).body;
  }
  async function addMember(project: Json, user: TestUser, level: number): Promise<void> {
    await as(alice, t.http.post(`${API}/projects/${project.id}/members`))
      .send({ user_id: user.id, access_level: level })
      .expect(201);
  }

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-lfs-'));
    // the hrefs of the batch API are under EXTERNAL_URL (8.17's http_url_to_repo): the app listens there
    const port = await freePort();
    t = await startTestApp({ LFS_MAX_OBJECT_SIZE: String(LIMIT), EXTERNAL_URL: `http://127.0.0.1:${port}` });
    await t.app.app.listen(port, '127.0.0.1');
    cli = new GitCli(tmp, port);
    lfsDir = join(t.config.dataDir, 'lfs-objects');
    tmpDir = join(t.config.dataDir, '.lfs-tmp');
    alice = await t.createUser({ username: 'alice', name: 'Alice', projects_limit: 100 });
    bob = await t.createUser({ username: 'bob', name: 'Bob' });
    carol = await t.createUser({ username: 'carol', name: 'Carol' });
    gina = await t.createUser({ username: 'gina', name: 'Gina' });
    dave = await t.createUser({ username: 'dave', name: 'Dave', projects_limit: 100 });
    priv = await createProject(alice, 'priv', 0);
    pub = await createProject(alice, 'pub', 20);
    await createProject(dave, 'others', 0); // dave's private project
    for (const p of [priv, pub]) {
      await addMember(p, bob, 30);
      await addMember(p, carol, 20);
      await addMember(p, gina, 10);
    }
    // git-lfs's filters in the test HOME's global config
    await cli.ok(['lfs', 'install', '--skip-repo']);
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  describe('the stock git-lfs client', () => {
    const big = Buffer.alloc(3000, 'lfs-content-'); // under LIMIT
    const oid = sha256(big);

    it('a developer pushes a repository with an LFS file; a reporter clones it with the content', async () => {
      const dir = newDir('push');
      await cli.ok(['init', '-q', dir]);
      await cli.ok(['lfs', 'track', '*.bin'], dir);
      await cli.commit(dir, { 'README.md': '# lfs\n', 'data.bin': big }, 'with lfs');
      await cli.ok(['remote', 'add', 'origin', cli.url('alice/priv', 'bob', bob.token)], dir);
      const push = await cli.run(['push', 'origin', 'master'], dir);
      expect(push.stderr).not.toMatch(/error/i);
      expect(push.code).toBe(0);
      // stored content-addressed, nothing left in the temporary folder
      expect(readFileSync(join(lfsDir, oid.slice(0, 2), oid.slice(2, 4), oid.slice(4)))).toEqual(big);
      expect(filesUnder(tmpDir)).toEqual([]);
      const rows = await t.sql<{ oid: string; size: string; project_id: number }>(
        `SELECT o.oid, o.size::text AS size, l.project_id FROM lfs_objects o JOIN lfs_objects_projects l ON l.lfs_object_id = o.id`,
      );
      expect(rows).toEqual([{ oid, size: String(big.length), project_id: priv.id }]);

      const clone = join(newDir('clone'), 'c');
      await cli.ok(['clone', '-q', cli.url('alice/priv', 'carol', carol.token), clone]);
      expect(readFileSync(join(clone, 'data.bin'))).toEqual(big);
      // what git holds is the pointer
      expect(await cli.ok(['show', 'HEAD:data.bin'], clone)).toContain(`oid sha256:${oid}`);
    });

    it('a reporter cannot push LFS objects (the client reports 403), nothing is stored', async () => {
      const dir = join(newDir('reporter'), 'c');
      await cli.ok(['clone', '-q', cli.url('alice/priv', 'carol', carol.token), dir]);
      const other = Buffer.from('reporter bytes\n');
      await cli.commit(dir, { 'r.bin': other }, 'reporter lfs');
      const push = await cli.run(['push', 'origin', 'HEAD:reporter'], dir);
      expect(push.code).not.toBe(0);
      expect(push.stderr).toMatch(/403|Access forbidden/);
      expect((await t.sql(`SELECT 1 FROM lfs_objects WHERE oid = $1`, [sha256(other)])).length).toBe(0);
    });

    it('a CI build token (gitlab-ci-token) downloads its own project objects and no other project', async () => {
      const token = (await as(alice, t.http.get(`${API}/projects/${priv.id}`)).expect(200)).body.runners_token as string;
      const clone = join(newDir('ci'), 'c');
      await cli.ok(['clone', '-q', cli.url('alice/priv', 'gitlab-ci-token', token), clone]);
      expect(readFileSync(join(clone, 'data.bin'))).toEqual(big);
      const res = await get('alice/priv', oid, basic('gitlab-ci-token', token)).expect(200);
      expect(res.body).toEqual(big);
      await put('alice/priv', sha256('x'), 1, Buffer.from('x'), basic('gitlab-ci-token', token)).expect(403);
      const pubToken = (await as(alice, t.http.get(`${API}/projects/${pub.id}`)).expect(200)).body.runners_token as string;
      await get('alice/priv', oid, basic('gitlab-ci-token', pubToken)).expect(404);
    });
  });

  describe('the batch API', () => {
    const content = Buffer.from('batch object\n');
    const oid = sha256(content);

    beforeAll(async () => {
      await put('alice/priv', oid, content.length, content, auth(bob)).expect(200);
    });

    it('download: an object the project has gets its href and the caller’s Authorization; a missing one gets 8.17’s error', async () => {
      const missing = sha256('nope');
      const res = await batch(
        'alice/priv',
        {
          operation: 'download',
          objects: [
            { oid, size: content.length },
            { oid: missing, size: 4 },
          ],
        },
        auth(carol),
      ).expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/vnd\.git-lfs\+json/);
      expect(JSON.parse(res.text)).toEqual({
        objects: [
          {
            oid,
            size: content.length,
            actions: { download: { href: `${t.config.externalUrl}/alice/priv.git/gitlab-lfs/objects/${oid}`, header: { Authorization: auth(carol) } } },
          },
          { oid: missing, size: 4, error: { code: 404, message: "Object does not exist on the server or you don't have permissions to access it" } },
        ],
      });
    });

    it('download on a public project: authenticated: true, and anonymous callers get no header', async () => {
      await put('alice/pub', oid, content.length, content, auth(bob)).expect(200);
      const res = await batch('alice/pub', { operation: 'download', objects: [{ oid, size: content.length }] }).expect(200);
      expect(JSON.parse(res.text).objects[0]).toEqual({
        oid,
        size: content.length,
        actions: { download: { href: `${t.config.externalUrl}/alice/pub.git/gitlab-lfs/objects/${oid}`, header: {} } },
        authenticated: true,
      });
      expect((await get('alice/pub', oid).expect(200)).body).toEqual(content);
    });

    it('upload: an object already there gets no action; a new one its upload href with its size', async () => {
      const fresh = sha256('fresh');
      const res = await batch(
        'alice/priv',
        {
          operation: 'upload',
          objects: [
            { oid, size: content.length },
            { oid: fresh, size: 5 },
          ],
        },
        auth(bob),
      ).expect(200);
      expect(JSON.parse(res.text)).toEqual({
        objects: [
          { oid, size: content.length },
          {
            oid: fresh,
            size: 5,
            actions: { upload: { href: `${t.config.externalUrl}/alice/priv.git/gitlab-lfs/objects/${fresh}/5`, header: { Authorization: auth(bob) } } },
          },
        ],
      });
    });

    it('upload: an object over the limit and an invalid object get errors of their own', async () => {
      const res = await batch(
        'alice/priv',
        {
          operation: 'upload',
          objects: [
            { oid: sha256('big'), size: LIMIT + 1 },
            { oid: 'xyz', size: 1 },
            { oid: sha256('neg'), size: -1 },
          ],
        },
        auth(bob),
      ).expect(200);
      const objects = JSON.parse(res.text).objects as Json[];
      expect(objects[0].error).toEqual({ code: 413, message: `Object is larger than the limit of ${LIMIT} bytes` });
      expect(objects[1].error.code).toBe(422);
      expect(objects[2].error.code).toBe(422);
      expect(objects.every((o) => !o.actions)).toBe(true);
    });

    it('no objects: 404 Not found. (8.17), with its documentation_url', async () => {
      const res = await batch('alice/priv', { operation: 'download', objects: [] }, auth(carol)).expect(404);
      expect(res.body).toEqual({ message: '404 Not found.', documentation_url: `${t.config.externalUrl}/help` });
    });

    it('an unknown operation: 403 Access forbidden for a member, 404 for an outsider', async () => {
      const res = await batch('alice/priv', { operation: 'delete', objects: [{ oid, size: 1 }] }, auth(alice)).expect(403);
      expect(res.body.message).toBe('403 Access forbidden. Check your access level.');
      await batch('alice/priv', { operation: 'delete', objects: [{ oid, size: 1 }] }, auth(dave)).expect(404);
    });

    it('the batch body is read whatever its Content-Type (no body parser consumes it first)', async () => {
      const body = JSON.stringify({ operation: 'download', objects: [{ oid, size: content.length }] });
      for (const type of ['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
        const res = await t.http
          .post('/alice/priv.git/info/lfs/objects/batch')
          .timeout({ response: 5000 })
          .set('Authorization', auth(carol))
          .set('Content-Type', type)
          .send(body);
        expect([type, res.status]).toEqual([type, 200]);
      }
    });

    it('malformed requests: 400 with a message', async () => {
      expect((await batch('alice/priv', '{"operation":', auth(bob)).expect(400)).body.message).toBe('400 Bad request - malformed JSON body');
      expect((await batch('alice/priv', [1, 2], auth(bob)).expect(400)).body.message).toMatch(/^400 Bad request/);
      expect((await batch('alice/priv', { operation: 'upload', objects: 'x' }, auth(bob)).expect(400)).body.message).toMatch(/objects must be an array/);
      expect((await batch('alice/priv', { operation: 'upload', objects: [7] }, auth(bob)).expect(400)).body.message).toMatch(/every object/);
    });

    it('who may: reporter downloads, guest and reporter may not upload (403), outsiders get 404, anonymous 401', async () => {
      const down = { operation: 'download', objects: [{ oid, size: content.length }] };
      const up = { operation: 'upload', objects: [{ oid: sha256('who'), size: 3 }] };
      await batch('alice/priv', down, auth(carol)).expect(200);
      await batch('alice/priv', up, auth(bob)).expect(200);
      expect((await batch('alice/priv', up, auth(carol)).expect(403)).body.message).toBe('403 Access forbidden. Check your access level.');
      await batch('alice/priv', down, auth(gina)).expect(403); // a guest may not download code
      expect((await batch('alice/priv', down, auth(dave)).expect(404)).body.message).toBe('404 Not found.');
      const anon = await batch('alice/priv', down).expect(401);
      expect(anon.headers['www-authenticate']).toBe('Basic realm="GitLab"');
      await batch('alice/pub', up).expect(401);
      await batch('alice/pub', up, auth(dave)).expect(403);
      await batch('alice/priv', down, basic('carol', 'wrong-password')).expect(401);
      await batch('nobody/nothing', down, auth(alice)).expect(404);
    });

    it('lfs_enabled of the projects API (8.17 v3): shown, set on create and edit; false refuses both operations (403)', async () => {
      expect(priv.lfs_enabled).toBe(true);
      const off = (
        await as(alice, t.http.post(`${API}/projects`))
          .send({ name: 'lfs-off', visibility_level: 0, lfs_enabled: false })
          .expect(201)
      ).body;
      expect(off.lfs_enabled).toBe(false);
      expect((await as(alice, t.http.get(`${API}/projects/${off.id}`)).expect(200)).body.lfs_enabled).toBe(false);
      await as(alice, t.http.put(`${API}/projects/${off.id}`))
        .send({ lfs_enabled: 'maybe' })
        .expect(400);
      await batch('alice/lfs-off', { operation: 'download', objects: [{ oid, size: 1 }] }, auth(alice)).expect(403);
      await put('alice/lfs-off', oid, content.length, content, auth(alice)).expect(403);
      expect(
        (
          await as(alice, t.http.put(`${API}/projects/${off.id}`))
            .send({ lfs_enabled: true })
            .expect(200)
        ).body.lfs_enabled,
      ).toBe(true);
      await put('alice/lfs-off', oid, content.length, content, auth(alice)).expect(200);
      await batch('alice/lfs-off', { operation: 'download', objects: [{ oid, size: content.length }] }, auth(alice)).expect(200);
    });

    it('the pre-batch API answers 501 with 8.17’s text', async () => {
      const res = await t.http.post('/alice/priv.git/info/lfs/objects').set('Authorization', auth(carol)).send({}).expect(501);
      expect(res.body.message).toBe('501 Server supports batch API only, please update your Git LFS client to version 1.0.1 and up.');
    });
  });

  describe('the object store', () => {
    it('a wrong hash: 422 Unprocessable entity, nothing kept', async () => {
      const body = Buffer.from('these are not the bytes\n');
      const claimed = sha256('other bytes');
      const res = await put('alice/priv', claimed, body.length, body, auth(bob)).expect(422);
      expect(res.body.message).toBe('422 Unprocessable entity');
      expect(filesUnder(tmpDir)).toEqual([]);
      expect(existsSync(join(lfsDir, claimed.slice(0, 2), claimed.slice(2, 4), claimed.slice(4)))).toBe(false);
      expect((await t.sql(`SELECT 1 FROM lfs_objects WHERE oid = $1`, [claimed])).length).toBe(0);
    });

    it('a wrong size (fewer or more bytes than the path says): 422, nothing kept', async () => {
      const body = Buffer.from('sized\n');
      await put('alice/priv', sha256(body), body.length + 1, body, auth(bob)).expect(422);
      await put('alice/priv', sha256(body), body.length - 1, body, auth(bob)).expect(422);
      expect(filesUnder(tmpDir)).toEqual([]);
      expect((await t.sql(`SELECT 1 FROM lfs_objects WHERE oid = $1`, [sha256(body)])).length).toBe(0);
    });

    it('an object over LFS_MAX_OBJECT_SIZE: 413 before any byte is stored', async () => {
      const body = Buffer.alloc(LIMIT + 1, 1);
      await put('alice/priv', sha256(body), body.length, body, auth(bob)).expect(413);
      expect((await t.sql(`SELECT 1 FROM lfs_objects WHERE oid = $1`, [sha256(body)])).length).toBe(0);
    });

    it('a truncated upload (the client goes away) leaves nothing behind', async () => {
      const body = Buffer.alloc(2000, 7);
      const oid = sha256(body);
      await new Promise<void>((resolve) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port: cli.port,
          method: 'PUT',
          path: `/alice/priv.git/gitlab-lfs/objects/${oid}/${body.length}`,
          headers: { Authorization: auth(bob), 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' },
        });
        req.on('error', () => resolve());
        req.write(body.subarray(0, 500));
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 500);
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(filesUnder(tmpDir)).toEqual([]);
      expect((await t.sql(`SELECT 1 FROM lfs_objects WHERE oid = $1`, [oid])).length).toBe(0);
    });

    it('bad oid or size in the path: 404', async () => {
      await put('alice/priv', 'abc', 1, Buffer.from('x'), auth(bob)).expect(404);
      await get('alice/priv', 'ABC', auth(bob)).expect(404);
      await t.http
        .put(`/alice/priv.git/gitlab-lfs/objects/${sha256('x')}/-1`)
        .set('Authorization', auth(bob))
        .send('x')
        .expect(404);
    });

    it('an object of another project is not served through this one, even with its oid and a valid upload elsewhere', async () => {
      const secret = Buffer.from('dave secret\n');
      const oid = sha256(secret);
      await put('dave/others', oid, secret.length, secret, auth(dave)).expect(200);
      expect((await get('dave/others', oid, auth(dave)).expect(200)).body).toEqual(secret);
      // alice's project does not link it: 404 to its members, and the batch says it is missing
      await get('alice/priv', oid, auth(alice)).expect(404);
      const res = await batch('alice/priv', { operation: 'download', objects: [{ oid, size: secret.length }] }, auth(alice)).expect(200);
      expect(JSON.parse(res.text).objects[0].error.code).toBe(404);
      // dave's private project is invisible to alice
      await get('dave/others', oid, auth(alice)).expect(404);
      // uploading the same bytes through one's own project links it there, without a second file
      await put('alice/priv', oid, secret.length, secret, auth(bob)).expect(200);
      expect((await get('alice/priv', oid, auth(carol)).expect(200)).body).toEqual(secret);
      expect(filesUnder(lfsDir).filter((f) => f.endsWith(oid.slice(4)))).toHaveLength(1);
    });
  });

  describe('forks and deletion', () => {
    it('a fork serves its source’s objects through link rows (no copy); deleting projects removes what nobody links', async () => {
      const content = Buffer.from('forked object\n');
      const oid = sha256(content);
      const src = await createProject(alice, 'fork-src', 20);
      await put('alice/fork-src', oid, content.length, content, auth(alice)).expect(200);
      const fork = (await as(dave, t.http.post(`${API}/projects/fork/${src.id}`)).expect(201)).body;
      expect((await get(`dave/${fork.path}`, oid, auth(dave)).expect(200)).body).toEqual(content);
      expect(filesUnder(lfsDir).filter((f) => f.endsWith(oid.slice(4)))).toHaveLength(1);
      const file = join(lfsDir, oid.slice(0, 2), oid.slice(2, 4), oid.slice(4));

      await as(alice, t.http.delete(`${API}/projects/${src.id}`)).expect(200);
      // still linked by the fork: kept
      await new Promise((r) => setTimeout(r, 1500));
      expect(existsSync(file)).toBe(true);
      expect((await get(`dave/${fork.path}`, oid, auth(dave)).expect(200)).body).toEqual(content);

      await as(dave, t.http.delete(`${API}/projects/${fork.id}`)).expect(200);
      const deadline = Date.now() + 15_000;
      while (existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(existsSync(file)).toBe(false);
      expect((await t.sql(`SELECT 1 FROM lfs_objects WHERE oid = $1`, [oid])).length).toBe(0);
    });
  });

  it('backup and restore carry the objects and their links: the restored instance serves them', async () => {
    const content = Buffer.from('kept across a restore\n');
    const oid = sha256(content);
    await put('alice/priv', oid, content.length, content, auth(bob)).expect(200);
    const work = mkdtempSync(join(tmpdir(), 'glv3-lfs-backup-'));
    const restoredDir = mkdtempSync(join(tmpdir(), 'glv3-lfs-restored-'));
    const file = join(work, 'backup.tar.gz');
    const onPostgres = !!t.config.databaseUrl;
    const target = onPostgres ? await createTestDatabase({ empty: true }) : undefined;
    try {
      await backup(t.config, t.app.db.dataSource, file);
      const config = loadConfig({
        DATA_DIR: restoredDir,
        LOG_LEVEL: 'silent',
        SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
        EXTERNAL_URL: 'http://gitlab.test',
        SSH_ENABLED: 'false',
        EMBEDDED_DB_DIR: join(restoredDir, 'db'),
        DATABASE_URL: target?.url ?? '',
      });
      const db = await openDatabase(config, { migrate: false });
      try {
        await restore(config, db.dataSource, file);
      } finally {
        await db.close();
      }
      expect(readFileSync(join(restoredDir, 'lfs-objects', oid.slice(0, 2), oid.slice(2, 4), oid.slice(4)))).toEqual(content);
      const restored = await createApp(config);
      try {
        const res = await request(restored.app.getHttpServer())
          .get(`/alice/priv.git/gitlab-lfs/objects/${oid}`)
          .set('Authorization', auth(carol))
          .buffer(true)
          .parse(binaryParser)
          .expect(200);
        expect(res.body).toEqual(content);
        await request(restored.app.getHttpServer()).get(`/alice/priv.git/gitlab-lfs/objects/${oid}`).set('Authorization', auth(dave)).expect(404);
      } finally {
        await restored.close();
      }
    } finally {
      await target?.release();
      rmSync(work, { recursive: true, force: true });
      rmSync(restoredDir, { recursive: true, force: true });
    }
  });

  it('LFS_ENABLED=false: 501 with 8.17’s text', async () => {
    const off = await startTestApp({ LFS_ENABLED: 'false' });
    try {
      const u = await off.createUser({ username: 'offuser', name: 'Off' });
      const p = await off.http.post(`${API}/projects`).set('PRIVATE-TOKEN', u.token).send({ name: 'p', lfs_enabled: true }).expect(201);
      // 8.17's lfs_enabled?: the project's flag and the instance's switch
      expect(p.body.lfs_enabled).toBe(false);
      const res = await off.http
        .post('/offuser/p.git/info/lfs/objects/batch')
        .set('Authorization', basic('offuser', u.token))
        .set('Content-Type', 'application/vnd.git-lfs+json')
        .send(JSON.stringify({ operation: 'download', objects: [{ oid: sha256('a'), size: 1 }] }))
        .expect(501);
      expect(res.body.message).toBe('501 Git LFS is not enabled on this GitLab server, contact your admin.');
    } finally {
      await off.close();
    }
  });
});
