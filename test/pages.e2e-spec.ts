import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import request from 'supertest';
import { backup, restore } from '../src/admin/backup';
import { createApp } from '../src/app.factory';
import { openDatabase } from '../src/database/data-source';
import { createTestDatabase } from './helpers/test-db';
import { runChecks } from '../src/cli';
import { ConfigError, loadConfig } from '../src/config/config';
import { pagesUrl } from '../src/config/pages-config';
import { ci, Json, waitFor } from './helpers/ci';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * GitLab Pages (CE 8.17): a `pages` build's public/ folder published when it succeeds (the
 * `pages:deploy` commit status) and served for `<namespace>.<PAGES_DOMAIN>`, never on the API's host.
 * The archive cases use hand-built zips uploaded through the runner API of a registered runner; one
 * pipeline is run by the real gitlab-ci-multi-runner 1.3.5 (GITLAB_RUNNER_BIN).
 */
const DOMAIN = 'pages.test';
const BIN = process.env.GITLAB_RUNNER_BIN ?? '';
const realRunner = !!BIN && existsSync(BIN);
if (!realRunner) console.warn('pages: the real-runner case is skipped — set GITLAB_RUNNER_BIN to a gitlab-ci-multi-runner 1.3.5 binary');

const PAGES_YML = `
pages:
  script: ["echo building"]
  artifacts:
    paths: [public]
`;

interface ZipEntry {
  name: string;
  data?: string | Buffer;
  /** Unix mode with its type bits (0o100644 a file, 0o120777 a symbolic link, 0o040755 a folder). */
  mode?: number;
  deflate?: boolean;
  /** The uncompressed size the directory declares (a lie when it differs from the data's). */
  declaredSize?: number;
}

/** A zip as archive/zip writes one (made on Unix, UTF-8 names), with whatever names and modes a test needs. */
function makeZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    const body = e.deflate ? deflateRawSync(data) : data;
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(data);
    const size = e.declaredSize ?? data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(e.deflate ? 8 : 0, 10);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? (e.name.endsWith('/') ? 0o040755 : 0o100644)) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += 30 + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** What `fn` writes to stdout, as lines (it is not written). */
async function stdoutOf(fn: () => Promise<unknown>): Promise<string[]> {
  const write = process.stdout.write.bind(process.stdout);
  let text = '';
  process.stdout.write = (chunk: string) => {
    text += chunk;
    return true;
  };
  try {
    await fn();
  } finally {
    process.stdout.write = write;
  }
  return text.split('\n');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('GitLab Pages', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let port: number;
  let runner: { token: string };

  /** A request exactly as written (no URL normalisation by the client: `..`, `%2e%2e` and backslashes reach the server). */
  function get(host: string, path: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: { Host: host, ...opts.headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** A project with the pages job; its build claimed by the runner, given `zip` as artifacts, and ended `success`. */
  async function deploy(zip: Buffer, extra: Json = {}, project?: Json, fileName = 'artifacts.zip'): Promise<{ p: Json; ns: string; status: Json }> {
    const p = project ?? (await c.project(owner, PAGES_YML, extra));
    if (project) {
      await t.http
        .put(`/api/v3/projects/${p.id}/repository/files`)
        .set('PRIVATE-TOKEN', owner.token)
        .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: `${PAGES_YML}\n# again ${Date.now()}\n`, commit_message: 'again' })
        .expect(200);
    }
    const build = await waitFor(async () => {
      const res = await c.api.requestBuild(runner.token);
      return res.status === 201 ? (res.body as Json) : undefined;
    }, 'the pages build');
    expect(build.name).toBe('pages');
    await t.http.post(`/ci/api/v1/builds/${build.id}/artifacts`).set('BUILD-TOKEN', build.token).attach('file', zip, fileName).expect(201);
    await c.api.update(build.id, { token: runner.token, state: 'success' }).expect(200);
    const status = await waitFor(async () => {
      const [row] = await t.sql<Json>(
        `SELECT status, description, stage, allow_failure, ref, sha, author_id FROM commit_statuses WHERE project_id = $1 AND name = 'pages:deploy' AND sha = $2 ORDER BY id DESC LIMIT 1`,
        [p.id, build.sha],
      );
      return row && ['success', 'failed'].includes(row.status) ? row : undefined;
    }, 'the pages:deploy status');
    return { p, ns: (p.path as string).split('/')[0], status };
  }

  const SITE = [
    { name: 'public/' },
    { name: 'public/index.html', data: '<h1>home</h1>', deflate: true },
    { name: 'public/style.css', data: 'body { color: red }' },
    { name: 'public/app.js', data: 'console.log(1)' },
    { name: 'public/data.json', data: '{"a":1}' },
    { name: 'public/404.html', data: '<h1>custom not found</h1>' },
    { name: 'public/docs/', mode: 0o040755 },
    { name: 'public/docs/index.html', data: '<h1>docs</h1>', deflate: true },
    { name: 'public/docs/guide.txt', data: 'plain guide' },
    { name: 'public/noext', data: 'bytes' },
    { name: 'README.md', data: 'outside public' },
  ];

  beforeAll(async () => {
    port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // TRUST_PROXY: X-Forwarded-Host from this (loopback) client is believed, as from a reverse proxy
    t = await startTestApp({ EXTERNAL_URL: url, PAGES_DOMAIN: DOMAIN, TRUST_PROXY: 'loopback', LOG_LEVEL: process.env.CI_TEST_LOG ?? 'silent' });
    await t.app.app.listen(port, '127.0.0.1');
    c = ci(t);
    owner = await t.createUser();
    runner = await c.registerRunner();
  });

  afterAll(async () => {
    await t.close();
  });

  describe('a deployed site', () => {
    let ns: string;
    let p: Json;
    let host: string;

    beforeAll(async () => {
      const d = await deploy(makeZip(SITE));
      ({ ns, p } = d);
      host = `${ns}.${DOMAIN}`;
      expect(d.status).toMatchObject({ status: 'success', description: null, stage: 'deploy', allow_failure: false, ref: 'master', author_id: owner.id });
      // one status, moved from running to success (as 8.17's enqueue!, run!, success)
      expect(await t.sql(`SELECT status FROM commit_statuses WHERE project_id = $1 AND name = 'pages:deploy'`, [p.id])).toEqual([{ status: 'success' }]);
    });

    it('serves the project at http://<namespace>.<domain>/<project>/, with types by extension', async () => {
      const project = (p.path as string).split('/')[1];
      const home = await get(host, `/${project}/`);
      expect([home.status, home.headers['content-type'], home.body]).toEqual([200, 'text/html; charset=utf-8', '<h1>home</h1>']);
      expect(home.headers['content-length']).toBe(String('<h1>home</h1>'.length));
      expect(home.headers['x-content-type-options']).toBe('nosniff');
      expect(home.headers['set-cookie']).toBeUndefined();
      const types: Record<string, string> = {
        'style.css': 'text/css; charset=utf-8',
        'app.js': 'text/javascript; charset=utf-8',
        'data.json': 'application/json; charset=utf-8',
        'docs/guide.txt': 'text/plain; charset=utf-8',
        noext: 'application/octet-stream',
      };
      for (const [file, type] of Object.entries(types)) {
        const res = await get(host, `/${project}/${file}`);
        expect([file, res.status, res.headers['content-type']]).toEqual([file, 200, type]);
      }
      // any case and any port in the Host header
      const upper = await get(`${host.toUpperCase()}:8080`, `/${project}/style.css`);
      expect([upper.status, upper.body]).toEqual([200, 'body { color: red }']);
      // the path of the project in any case too
      expect((await get(host, `/${project.toUpperCase()}/style.css`)).status).toBe(200);
    });

    it('folders: index.html, redirects without the slash, no listing; 404.html for what is missing; HEAD; ETag', async () => {
      const project = (p.path as string).split('/')[1];
      const bare = await get(host, `/${project}`);
      expect([bare.status, bare.headers.location]).toEqual([302, `/${project}/`]);
      const folder = await get(host, `/${project}/docs`);
      expect([folder.status, folder.headers.location]).toEqual([302, `/${project}/docs/`]);
      expect((await get(host, `/${project}/docs/`)).body).toBe('<h1>docs</h1>');
      const missing = await get(host, `/${project}/nope.html`);
      expect([missing.status, missing.body, missing.headers['content-type']]).toEqual([404, '<h1>custom not found</h1>', 'text/html; charset=utf-8']);
      // a file is no folder
      expect((await get(host, `/${project}/style.css/`)).status).toBe(404);
      // what was outside public/ is not published
      expect((await get(host, `/${project}/README.md`)).status).toBe(404);
      const head = await get(host, `/${project}/style.css`, { method: 'HEAD' });
      expect([head.status, head.body, head.headers['content-length']]).toEqual([200, '', '19']);
      const etag = head.headers.etag as string;
      expect(etag).toMatch(/^W\/"/);
      expect(head.headers['last-modified']).toBeDefined();
      expect((await get(host, `/${project}/style.css`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
      expect((await get(host, `/${project}/style.css`, { method: 'POST' })).status).toBe(405);
    });

    it('refuses paths that leave the site: .., %2e%2e, ..%2f, NUL, backslashes', async () => {
      const project = (p.path as string).split('/')[1];
      for (const path of [
        `/${project}/../${project}/index.html`,
        `/${project}/%2e%2e/%2e%2e/etc/passwd`,
        `/${project}/..%2f..%2fetc%2fpasswd`,
        `/${project}/docs/..%5c..%5cindex.html`,
        `/${project}/index.html%00.css`,
        `/${project}/docs\\..\\index.html`,
        `/${project}/%2E%2E/`,
        `/${project}//etc/passwd`,
        '/../../../../etc/passwd',
        `/${project}/%zz`,
      ]) {
        const res = await get(host, path);
        expect([path, res.status]).toEqual([path, 400]);
        expect(res.body).not.toContain('root:');
      }
    });

    it('no API on a Pages host, nor on PAGES_DOMAIN itself; other hosts reach the API', async () => {
      for (const h of [host, DOMAIN, `x.y.${DOMAIN}`]) {
        const res = await get(h, '/api/v3/user', { headers: { 'PRIVATE-TOKEN': owner.token } });
        expect([h, res.status]).toEqual([h, 404]);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.body).not.toContain(owner.username);
        expect(res.headers['set-cookie']).toBeUndefined();
        expect((await get(h, '/api/v3/session', { method: 'POST' })).status).toBe(405);
      }
      // a host that merely contains PAGES_DOMAIN is not a Pages host
      const evil = await get(`evil.${DOMAIN}.attacker`, '/api/v3/user', { headers: { 'PRIVATE-TOKEN': owner.token } });
      expect([evil.status, evil.body]).toEqual([200, expect.stringContaining(`"username":"${owner.username}"`)]);
      const api = await get(`127.0.0.1:${port}`, '/api/v3/user', { headers: { 'PRIVATE-TOKEN': owner.token } });
      expect(api.status).toBe(200);
      // behind a trusted proxy, a forwarded host under PAGES_DOMAIN is a Pages request, and no forwarded host brings the API onto a site's origin
      const forwarded = await get(`127.0.0.1:${port}`, '/api/v3/user', { headers: { 'PRIVATE-TOKEN': owner.token, 'X-Forwarded-Host': host } });
      expect([forwarded.status, forwarded.headers['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
      const back = await get(host, '/api/v3/user', { headers: { 'PRIVATE-TOKEN': owner.token, 'X-Forwarded-Host': `127.0.0.1:${port}` } });
      expect([back.status, back.headers['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
      // a namespace without a site, and a host naming none
      expect((await get(`nobody-here.${DOMAIN}`, '/')).status).toBe(404);
    });

    it('a site follows its project when renamed (kept by id), and goes when the project is deleted', async () => {
      const before = (p.path as string).split('/')[1];
      await t.http
        .put(`/api/v3/projects/${p.id}`)
        .set('PRIVATE-TOKEN', owner.token)
        .send({ path: `${before}-renamed` })
        .expect(200);
      expect((await get(host, `/${before}-renamed/`)).body).toBe('<h1>home</h1>');
      expect((await get(host, `/${before}/`)).status).toBe(404);
      const dir = join(t.config.dataDir, 'pages', String(p.id));
      expect(existsSync(join(dir, 'public', 'index.html'))).toBe(true);

      // backups carry the sites with the rest of DATA_DIR
      const file = join(mkdtempSync(join(tmpdir(), 'pages-backup-')), 'backup.tar.gz');
      await backup(t.config, t.app.db.dataSource, file);
      const listing = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' });
      expect(listing).toContain(`data/pages/${p.id}/public/index.html`);
      expect(listing).not.toContain('.pages-tmp');
      // and a restore brings the site back, served by the restored server
      const restoredDir = mkdtempSync(join(tmpdir(), 'pages-restored-'));
      const target = process.env.DATABASE_URL ? await createTestDatabase({ empty: true }) : undefined;
      try {
        const config = loadConfig({
          DATA_DIR: restoredDir,
          DATABASE_URL: target?.url ?? '',
          EMBEDDED_DB_DIR: join(restoredDir, 'db'),
          LOG_LEVEL: 'silent',
          SECRET_KEY: t.config.secretKey.toString(),
          SSH_ENABLED: 'false',
          PAGES_DOMAIN: DOMAIN,
        });
        const db = await openDatabase(config, { migrate: false });
        try {
          await restore(config, db.dataSource, file);
        } finally {
          await db.close();
        }
        const restored = await createApp(config);
        try {
          const res = await request(restored.app.getHttpServer()).get(`/${before}-renamed/`).set('Host', host);
          expect([res.status, res.text]).toEqual([200, '<h1>home</h1>']);
        } finally {
          await restored.close();
        }
      } finally {
        await target?.release();
        rmSync(restoredDir, { recursive: true, force: true });
        rmSync(file, { force: true });
      }

      await t.http.delete(`/api/v3/projects/${p.id}`).set('PRIVATE-TOKEN', owner.token).expect(200);
      await waitFor(async () => !existsSync(dir), 'the site removed');
      expect((await get(host, `/${before}-renamed/`)).status).toBe(404);
    });
  });

  it("the project <namespace>.<domain> is the namespace's site at /, and project sites fall back to its 404.html", async () => {
    const group = await deploy(
      makeZip([
        { name: 'public/index.html', data: 'namespace home' },
        { name: 'public/404.html', data: 'namespace 404' },
        { name: 'public/about/index.html', data: 'about' },
      ]),
      { name: 'site', path: `${owner.username}.${DOMAIN}` },
    );
    expect(group.status.status).toBe('success');
    const host = `${group.ns}.${DOMAIN}`;
    expect((await get(host, '/')).body).toBe('namespace home');
    expect((await get(host, '/about/')).body).toBe('about');
    const missing = await get(host, '/missing');
    expect([missing.status, missing.body]).toEqual([404, 'namespace 404']);
    // a project site without a 404.html of its own
    const project = await deploy(makeZip([{ name: 'public/index.html', data: 'proj' }]));
    const name = (project.p.path as string).split('/')[1];
    expect((await get(host, `/${name}/`)).body).toBe('proj');
    expect(await get(host, `/${name}/missing`)).toMatchObject({ status: 404, body: 'namespace 404' });
  });

  describe('archives that are refused keep the previous site', () => {
    let p: Json;
    let host: string;
    let name: string;

    beforeAll(async () => {
      const first = await deploy(makeZip([{ name: 'public/index.html', data: 'v1' }]));
      p = first.p;
      host = `${first.ns}.${DOMAIN}`;
      name = (p.path as string).split('/')[1];
      expect((await get(host, `/${name}/`)).body).toBe('v1');
    });

    const refused: [string, ZipEntry[], string | RegExp][] = [
      [
        'a .. entry',
        [
          { name: 'public/index.html', data: 'v2' },
          { name: 'public/../escaped.html', data: 'x' },
        ],
        'pages failed to extract',
      ],
      ['an absolute entry', [{ name: 'public//etc/cron.d/x', data: 'x' }], 'pages failed to extract'],
      ['a backslash entry', [{ name: 'public/..\\..\\x.html', data: 'x' }], 'pages failed to extract'],
      ['a NUL in a name', [{ name: 'public/a\u0000.html', data: 'x' }], 'pages failed to extract'],
      ['an entry larger than it declares', [{ name: 'public/big.html', data: 'x'.repeat(5000), deflate: true, declaredSize: 10 }], 'pages failed to extract'],
      ['no public folder', [{ name: 'site/index.html', data: 'x' }], 'pages miss the public folder'],
    ];
    for (const [what, entries, text] of refused) {
      it(`${what}: the pages:deploy status fails with 8.17's text`, async () => {
        const d = await deploy(makeZip(entries), {}, p);
        expect(d.status).toMatchObject({ status: 'failed', description: text, stage: 'deploy' });
        expect((await get(host, `/${name}/`)).body).toBe('v1');
        expect(existsSync(join(t.config.dataDir, 'escaped.html'))).toBe(false);
        expect(existsSync(join(t.config.dataDir, 'pages', String(p.id), 'escaped.html'))).toBe(false);
      });
    }

    it('too large for max_pages_size: 8.17\'s "artifacts for pages are too large: N"', async () => {
      const setMax = (mb: number) => t.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', t.root.token).send({ max_pages_size: mb }).expect(200);
      const bad = await t.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', t.root.token).send({ max_pages_size: 0 });
      expect([bad.status, bad.body]).toEqual([400, { message: { max_pages_size: ['must be greater than 0'] } }]);
      await setMax(1);
      try {
        const big = 1024 * 1024 + 1;
        const d = await deploy(makeZip([{ name: 'public/index.html', data: Buffer.alloc(big, 0x61), deflate: true }]), {}, p);
        expect(d.status).toMatchObject({ status: 'failed', description: `artifacts for pages are too large: ${big}` });
        expect((await get(host, `/${name}/`)).body).toBe('v1');
      } finally {
        await setMax(100);
      }
    });

    it('symbolic links are not extracted (inside or out), the rest is published', async () => {
      const d = await deploy(
        makeZip([
          { name: 'public/index.html', data: 'v3' },
          { name: 'public/passwd', data: '/etc/passwd', mode: 0o120777 },
          { name: 'public/up', data: '../../..', mode: 0o120777 },
          { name: 'public/same.html', data: 'index.html', mode: 0o120777 },
        ]),
        {},
        p,
      );
      expect(d.status.status).toBe('success');
      expect((await get(host, `/${name}/`)).body).toBe('v3');
      for (const path of ['passwd', 'up/etc/passwd', 'same.html']) expect((await get(host, `/${name}/${path}`)).status).toBe(404);
    });
  });

  it('a .tar.gz artifacts archive is published too (8.17 took both); another format is refused', async () => {
    const src = mkdtempSync(join(tmpdir(), 'pages-tgz-'));
    try {
      mkdirSync(join(src, 'public', 'css'), { recursive: true });
      writeFileSync(join(src, 'public', 'index.html'), 'from a tarball');
      writeFileSync(join(src, 'public', 'css', 'a.css'), 'a {}');
      const tgz = execFileSync('tar', ['-czf', '-', '-C', src, 'public']);
      const d = await deploy(tgz, {}, undefined, 'artifacts.tar.gz');
      expect(d.status).toMatchObject({ status: 'success', description: null });
      const [ns, name] = (d.p.path as string).split('/');
      expect((await get(`${ns}.${DOMAIN}`, `/${name}/`)).body).toBe('from a tarball');
      expect((await get(`${ns}.${DOMAIN}`, `/${name}/css/a.css`)).headers['content-type']).toBe('text/css; charset=utf-8');
      const other = await deploy(tgz, {}, d.p, 'artifacts.rar');
      expect(other.status).toMatchObject({ status: 'failed', description: 'unsupported artifacts format' });
      expect((await get(`${ns}.${DOMAIN}`, `/${name}/`)).body).toBe('from a tarball');
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });

  it("8.17's other failures: missing pages artifacts; pages are outdated (allowed to fail: the ref moved on)", async () => {
    const claim = async () =>
      waitFor(async () => {
        const res = await c.api.requestBuild(runner.token);
        return res.status === 201 ? (res.body as Json) : undefined;
      }, 'the pages build');
    const statusOf = (projectId: number, sha: string) =>
      waitFor(async () => {
        const [row] = await t.sql<Json>(
          `SELECT status, description, allow_failure FROM commit_statuses WHERE project_id = $1 AND name = 'pages:deploy' AND sha = $2 ORDER BY id DESC LIMIT 1`,
          [projectId, sha],
        );
        return row && ['success', 'failed'].includes(row.status) ? row : undefined;
      }, 'the pages:deploy status');
    // no artifacts at all
    const bare = await c.project(owner, PAGES_YML);
    const first = await claim();
    await c.api.update(first.id, { token: runner.token, state: 'success' }).expect(200);
    expect(await statusOf(bare.id, first.sha)).toEqual({ status: 'failed', description: 'missing pages artifacts', allow_failure: false });
    // master moves on while the build runs: its site is not published
    const moved = await c.project(owner, PAGES_YML);
    const old = await claim();
    await t.http
      .post(`/api/v3/projects/${moved.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: 'later.txt', branch_name: 'master', content: 'later', commit_message: 'later' })
      .expect(201);
    await t.http
      .post(`/ci/api/v1/builds/${old.id}/artifacts`)
      .set('BUILD-TOKEN', old.token)
      .attach('file', makeZip([{ name: 'public/index.html', data: 'old' }]), 'artifacts.zip')
      .expect(201);
    await c.api.update(old.id, { token: runner.token, state: 'success' }).expect(200);
    expect(await statusOf(moved.id, old.sha)).toEqual({ status: 'failed', description: 'pages are outdated', allow_failure: true });
    expect(existsSync(join(t.config.dataDir, 'pages', String(moved.id), 'public'))).toBe(false);
    // the newer commit's pages build is left pending: take it off the queue for the cases after this one
    const newer = await claim();
    await c.api.update(newer.id, { token: runner.token, state: 'failed' }).expect(200);
  });

  it('only a build named pages that succeeds deploys', async () => {
    const p = await c.project(owner, `pages-not:\n  script: [x]\n  artifacts:\n    paths: [public]\n`);
    const build = await waitFor(async () => {
      const res = await c.api.requestBuild(runner.token);
      return res.status === 201 ? (res.body as Json) : undefined;
    }, 'the build');
    await t.http
      .post(`/ci/api/v1/builds/${build.id}/artifacts`)
      .set('BUILD-TOKEN', build.token)
      .attach('file', makeZip([{ name: 'public/index.html', data: 'x' }]), 'artifacts.zip')
      .expect(201);
    await c.api.update(build.id, { token: runner.token, state: 'success' }).expect(200);
    const failed = await c.project(owner, PAGES_YML);
    const pagesBuild = await waitFor(async () => {
      const res = await c.api.requestBuild(runner.token);
      return res.status === 201 ? (res.body as Json) : undefined;
    }, 'the pages build');
    await c.api.update(pagesBuild.id, { token: runner.token, state: 'failed' }).expect(200);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await t.sql(`SELECT id FROM commit_statuses WHERE name = 'pages:deploy' AND project_id IN ($1, $2)`, [p.id, failed.id])).toEqual([]);
    expect(existsSync(join(t.config.dataDir, 'pages', String(p.id)))).toBe(false);
  });

  it('configuration: PAGES_DOMAIN must not be the API host nor a parent of it; cli check reports it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pages-config-'));
    try {
      const base = { DATA_DIR: dataDir, SECRET_KEY: 'test-secret-key-test-secret-key-0123456789' };
      const refuse = (env: Record<string, string>) => () => loadConfig({ ...base, ...env });
      expect(refuse({ EXTERNAL_URL: 'https://example.io', PAGES_DOMAIN: 'example.io' })).toThrow(ConfigError);
      expect(refuse({ EXTERNAL_URL: 'https://git.example.io', PAGES_DOMAIN: 'EXAMPLE.io' })).toThrow(
        "PAGES_DOMAIN (example.io) must not be the host of EXTERNAL_URL (git.example.io) nor a parent domain of it: Pages sites would run on the API's origin",
      );
      expect(refuse({ PAGES_DOMAIN: 'not a domain' })).toThrow(/PAGES_DOMAIN must be a domain name/);
      expect(refuse({ PAGES_DOMAIN: '127.0.0.1' })).toThrow(/PAGES_DOMAIN must be a domain name/);
      expect(refuse({ PAGES_URL: 'https://example.io' })).toThrow(/PAGES_DOMAIN is not/);
      expect(refuse({ PAGES_DOMAIN: 'example.io', PAGES_URL: 'https://other.io' })).toThrow(/PAGES_URL's host/);
      expect(refuse({ PAGES_DOMAIN: 'example.io', PAGES_URL: 'https://example.io/x' })).toThrow(/without a path/);
      const ok = loadConfig({ ...base, EXTERNAL_URL: 'https://git.example.com', PAGES_DOMAIN: 'example.io', PAGES_URL: 'https://example.io:8443/' });
      expect(ok.pages).toMatchObject({ domain: 'example.io', url: 'https://example.io:8443' });
      // 8.17's Project#pages_url: the host in lower case; the namespace's own project at the bare host
      expect(pagesUrl(ok.pages, 'Group', 'Proj')).toBe('https://group.example.io:8443/Proj');
      expect(pagesUrl(ok.pages, 'Group', 'group.example.io')).toBe('https://group.example.io:8443');
      expect(pagesUrl(loadConfig({ ...base }).pages, 'group', 'proj')).toBeNull();
      expect(loadConfig({ ...base }).pages.domain).toBeNull();
      // a sibling under the same parent is fine: pages.example.com beside git.example.com
      expect(loadConfig({ ...base, EXTERNAL_URL: 'https://git.example.com', PAGES_DOMAIN: 'pages.example.com' }).pages.domain).toBe('pages.example.com');

      const lines = await stdoutOf(() => runChecks({ ...t.config }));
      expect(lines).toContain(`pages: ok (sites at http://<namespace>.${DOMAIN}/<project>/)`);
      const off = await stdoutOf(() => runChecks({ ...t.config, pages: { ...t.config.pages, domain: null, url: null } }));
      expect(off).toContain('pages: off (PAGES_DOMAIN is not set)');
      const shared = await stdoutOf(() => runChecks({ ...t.config, externalUrl: `http://api.${DOMAIN}` }));
      expect(shared.find((l) => l.startsWith('pages:'))).toMatch(/^pages: FAILED: PAGES_DOMAIN \(pages.test\) must not be the host of EXTERNAL_URL/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  (realRunner ? it : it.skip)(
    'the real runner 1.3.5 runs a pages job; its public/ is served by host name',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pages-runner-'));
      mkdirSync(join(dir, 'builds'));
      let output = '';
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
      // the fast cases' runner is a shared one too: unregister it so the real one takes the build
      await c.api.unregister(runner.token).expect(200);
      const real = await c.registerRunner({ description: 'real-pages-runner' });
      const yml = [
        'stages: [build, deploy]',
        'compile:',
        '  stage: build',
        '  script: ["echo compiled"]',
        'pages:',
        '  stage: deploy',
        '  script:',
        '    - mkdir -p public/css',
        '    - echo "<h1>built by $CI_BUILD_NAME on $CI_BUILD_REF_NAME</h1>" > public/index.html',
        `    - 'echo "h1 { color: blue }" > public/css/site.css'`,
        '    - echo "<p>gone</p>" > public/404.html',
        '  artifacts:',
        '    paths: [public]',
        '  only: [master]',
      ].join('\n');
      const p = await c.project(owner, yml);
      const child = spawn(
        BIN,
        ['run-single', '-u', `http://127.0.0.1:${port}/ci`, '-t', real.token, '--executor', 'shell', '--builds-dir', join(dir, 'builds'), '--name', 'real'],
        {
          cwd: dir,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      try {
        const status = await waitFor(
          async () => {
            const [row] = await t.sql<Json>(
              `SELECT status, description FROM commit_statuses WHERE project_id = $1 AND name = 'pages:deploy' ORDER BY id DESC LIMIT 1`,
              [p.id],
            );
            return row && ['success', 'failed'].includes(row.status) ? row : undefined;
          },
          'the pages:deploy status',
          150_000,
        ).catch((e: Error) => {
          throw new Error(`${e.message}\nrunner output:\n${output}`);
        });
        expect(status).toEqual({ status: 'success', description: null });
        expect((await c.builds(p.id)).map((b) => [b.name, b.status])).toEqual([
          ['compile', 'success'],
          ['pages', 'success'],
        ]);
        const [artifact] = await t.sql<Json>(
          `SELECT artifacts_file FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE b.project_id = $1 AND s.name = 'pages'`,
          [p.id],
        );
        expect(artifact.artifacts_file).toBe('artifacts.zip');
        const [ns, name] = p.path.split('/');
        const host = `${ns}.${DOMAIN}`;
        const home = await get(host, `/${name}/`);
        expect([home.status, home.headers['content-type'], home.body]).toEqual([200, 'text/html; charset=utf-8', '<h1>built by pages on master</h1>\n']);
        const css = await get(host, `/${name}/css/site.css`);
        expect([css.status, css.headers['content-type'], css.body]).toEqual([200, 'text/css; charset=utf-8', 'h1 { color: blue }\n']);
        expect(await get(host, `/${name}/nope`)).toMatchObject({ status: 404, body: '<p>gone</p>\n' });
        expect(readFileSync(join(t.config.dataDir, 'pages', String(p.id), 'public', 'index.html'), 'utf8')).toContain('built by pages');
        // removal with the project
        await t.http.delete(`/api/v3/projects/${p.id}`).set('PRIVATE-TOKEN', owner.token).expect(200);
        await waitFor(async () => (await get(host, `/${name}/`)).status === 404, 'the site gone');
      } finally {
        child.kill('SIGQUIT');
        await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('close', r)));
        rmSync(dir, { recursive: true, force: true });
      }
    },
    240_000,
  );
});
