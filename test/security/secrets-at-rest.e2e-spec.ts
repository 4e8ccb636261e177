import { readdirSync, readFileSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { ci, waitFor } from '../helpers/ci';
import { HookReceiver } from '../helpers/hook-receiver';
import { Json, planning } from '../helpers/planning';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

/**
 * Secrets at rest (issue 16, point 4). One run creates every kind of secret the server handles, with
 * recognisable plaintexts where the client chooses them and the server's own where it issues them;
 * then every table of the `public` and `pgboss` schemas, every file under DATA_DIR and the app's log
 * output at `debug` are searched for each plaintext and its base64 and hex forms. Tokens the API shows
 * again (private_token, runners_token, trigger tokens) are kept encrypted, so they are not found either.
 */
describe('security: no secret in plaintext at rest or in logs', () => {
  let t: TestApp;
  let rx: HookReceiver;
  const logged: string[] = [];
  let restoreStdout: () => void;
  const secrets: { kind: string; value: string }[] = [];
  const remember = (kind: string, value: unknown) => {
    if (typeof value !== 'string' || value.length < 8) throw new Error(`${kind}: no secret (${JSON.stringify(value)})`);
    secrets.push({ kind, value });
  };
  const SECRET_KEY = 'at-rest-secret-key-0123456789-abcdefghijkl';

  beforeAll(async () => {
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = (chunk: string | Uint8Array) => {
      logged.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    };
    restoreStdout = () => (process.stdout.write = write);
    t = await startTestApp({
      LOG_LEVEL: 'debug',
      SECRET_KEY,
      QUEUE_POLL_SECONDS: '0.5',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_LIMIT: '1',
      WEBHOOK_RETRY_DELAY_SECONDS: '1',
    });
    rx = await HookReceiver.start();
  }, 120_000);
  afterAll(async () => {
    restoreStdout?.();
    await t?.close();
    await rx?.close();
  });

  it('creates every kind of secret, then finds none of them in the database, DATA_DIR or the debug log', async () => {
    const api = planning(t);
    const c = ci(t);
    remember('SECRET_KEY', SECRET_KEY);
    remember('root password', t.root.password);
    remember('root private token', t.root.token);
    await api.put(t.root, '/application/settings').send({ allow_local_requests_from_hooks_and_services: true }).expect(200);

    // passwords (create, admin update) and private tokens
    const alice: TestUser = await t.createUser({ username: 'alice', email: 'alice@secrets.test', password: 'PW-alice-Plaintext-7391' });
    remember('password (create)', alice.password);
    remember('private token', alice.token);
    await api.put(t.root, `/users/${alice.id}`).send({ password: 'PW-alice-Changed-8842', projects_limit: 100 }).expect(200);
    remember('password (update)', 'PW-alice-Changed-8842');
    const s = await t.http.post('/api/v3/session').send({ login: 'alice', password: 'PW-alice-Changed-8842' }).expect(201);
    remember('private token (session)', s.body.private_token);
    // a sign-in with a wrong password and a token in the query string (request logging)
    await t.http.post('/api/v3/session').send({ login: 'alice', password: 'PW-wrong-Guess-5521' }).expect(401);
    remember('wrong password', 'PW-wrong-Guess-5521');
    await t.http.get(`/api/v3/user?private_token=${alice.token}`).expect(200);

    // OAuth: password grant and refresh
    const o1 = await t.http
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'password', username: 'alice', password: 'PW-alice-Changed-8842' })
      .expect(200);
    remember('oauth access token', o1.body.access_token);
    remember('oauth refresh token', o1.body.refresh_token);
    const o2 = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: o1.body.refresh_token }).expect(200);
    remember('oauth access token (refreshed)', o2.body.access_token);
    remember('oauth refresh token (refreshed)', o2.body.refresh_token);
    await t.http.get('/api/v3/user').set('Authorization', `Bearer ${o2.body.access_token}`).expect(200);
    await t.http.get(`/api/v3/user?access_token=${o2.body.access_token}`).expect(200);

    // CI: project runners_token, a registered runner, a secret variable, a trigger, a real build's token
    const yml = 'build:\n  script:\n    - echo "$DEPLOY_PASSWORD"\n';
    const p = await c.project(alice, yml);
    remember('project runners_token', p.runnersToken);
    const shared = await c.registerRunner({ description: 'shared' });
    remember('runner token (shared)', shared.token);
    const specific = await c.api.register({ token: p.runnersToken, description: 'specific' }).expect(201);
    remember('runner token (project)', specific.body.token);
    remember('registration token', await c.registrationToken());
    await api.post(alice, `/projects/${p.id}/variables`).send({ key: 'DEPLOY_PASSWORD', value: 'VAR-deploy-Secret-6617' }).expect(201);
    remember('secret variable', 'VAR-deploy-Secret-6617');
    await api.put(alice, `/projects/${p.id}/variables/DEPLOY_PASSWORD`).send({ value: 'VAR-deploy-Rotated-9904' }).expect(200);
    remember('secret variable (updated)', 'VAR-deploy-Rotated-9904');
    const trig = await api.post(alice, `/projects/${p.id}/triggers`).expect(201);
    remember('trigger token', trig.body.token);
    await t.http.post(`/api/v3/projects/${p.id}/trigger/builds`).send({ token: trig.body.token, ref: 'master' }).expect(201);
    const build = await waitFor(async () => {
      const r = await c.api.requestBuild(shared.token);
      return r.status === 201 ? (r.body as Json) : undefined;
    }, 'a build for the runner');
    remember('build token', build.token);
    expect(JSON.stringify(build.variables)).toContain('VAR-deploy-Rotated-9904'); // the runner gets it, the disk does not
    await c.api.patchTrace(build.id, build.token, 0, `$ git clone http://gitlab-ci-token:${build.token}@gitlab.test/x.git\n`).expect(202);
    await c.api.update(build.id, { token: shared.token, state: 'success', trace: '$ echo build\nbuilding\ndone\n' }).expect(200);
    await t.http.get(`/api/v3/projects/${p.id}/builds/${build.id}/trace`).set('PRIVATE-TOKEN', alice.token).expect(200);

    // hooks: token and URL userinfo, project and system hooks, delivered once
    const hook = await api
      .post(alice, `/projects/${p.id}/hooks`)
      .send({ url: rx.url('/proj', 'hookuser:HOOK-userinfo-Pass-3120'), token: 'HOOK-token-Secret-4471', push_events: true, issues_events: true })
      .expect(201);
    remember('hook url password', 'HOOK-userinfo-Pass-3120');
    remember('hook token', 'HOOK-token-Secret-4471');
    await api
      .put(alice, `/projects/${p.id}/hooks/${hook.body.id}`)
      .send({ url: rx.url('/proj', 'hookuser:HOOK-userinfo-Upd-5532'), token: 'HOOK-token-Upd-7720' })
      .expect(200);
    remember('hook url password (updated)', 'HOOK-userinfo-Upd-5532');
    remember('hook token (updated)', 'HOOK-token-Upd-7720');
    await api
      .post(t.root, '/hooks')
      .send({ url: rx.url('/sys', 'sysuser:SYSHOOK-userinfo-Pass-2284'), token: 'SYSHOOK-token-Secret-9137' })
      .expect(201);
    remember('system hook url password', 'SYSHOOK-userinfo-Pass-2284');
    remember('system hook token', 'SYSHOOK-token-Secret-9137');
    // a failing delivery too (its error is logged)
    rx.on('/fail', { statuses: [500] });
    await api
      .post(alice, `/projects/${p.id}/hooks`)
      .send({ url: rx.url('/fail', 'failuser:HOOK-fail-Pass-6604'), token: 'HOOK-fail-Token-1193', issues_events: true })
      .expect(201);
    remember('failing hook url password', 'HOOK-fail-Pass-6604');
    remember('failing hook token', 'HOOK-fail-Token-1193');
    await api.issue(alice, p.id, { title: 'fires the hooks' });
    const delivered = await rx.waitFor('/proj', 1);
    expect(delivered[0].headers['x-gitlab-token']).toBe('HOOK-token-Upd-7720');
    expect(delivered[0].headers.authorization).toBe(`Basic ${Buffer.from('hookuser:HOOK-userinfo-Upd-5532').toString('base64')}`);
    await rx.waitFor('/fail', 1);

    // an import URL with credentials (the import fails: the receiver is no git server)
    const imp = await api
      .post(alice, '/projects')
      .send({ name: 'imported', import_url: rx.url('/repo.git', 'impuser:IMPORT-userinfo-Pass-8093') })
      .expect(201);
    remember('import url password', 'IMPORT-userinfo-Pass-8093');
    await rx.waitFor('/sys', 1); // project_create
    await waitFor(async () => {
      const r = await api.get(alice, `/projects/${imp.body.id}`).expect(200);
      return r.body.import_status === 'failed' || r.body.import_status === 'finished';
    }, 'the import to end');

    // let the queue settle (deliveries logged, jobs archived) before the dump
    await new Promise((r) => setTimeout(r, 1500));

    // ---- search
    const forms = (v: string): string[] => {
      const b = Buffer.from(v, 'utf8');
      return [v, b.toString('base64').replace(/=+$/, ''), b.toString('base64url'), b.toString('hex')];
    };
    const found: string[] = [];
    const search = (where: string, haystack: string) => {
      const lower = haystack.toLowerCase();
      for (const sct of secrets) {
        for (const f of forms(sct.value)) {
          const hit = /^[0-9a-f]+$/.test(f) ? lower.includes(f) : haystack.includes(f);
          if (hit) found.push(`${sct.kind} (${f === sct.value ? 'plaintext' : 'encoded'}) in ${where}`);
        }
      }
    };

    const tables = await t.sql<{ s: string; n: string }>(
      `SELECT table_schema AS s, table_name AS n FROM information_schema.tables
        WHERE table_schema IN ('public', 'pgboss') AND table_type = 'BASE TABLE' ORDER BY 1, 2`,
    );
    let rows = 0;
    for (const { s: schema, n } of tables) {
      const dump = await t.sql<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${schema}"."${n}" x`);
      rows += dump.length;
      search(`table ${schema}.${n}`, dump.map((d) => d.j).join('\n'));
    }

    let files = 0;
    let bytes = 0;
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        const st = lstatSync(path);
        if (st.isDirectory()) walk(path);
        else if (st.isFile()) {
          const buf = readFileSync(path);
          files++;
          bytes += buf.length;
          search(`file ${path.slice(t.config.dataDir.length)}`, buf.toString('latin1'));
        }
      }
    };
    walk(t.config.dataDir);

    const log = logged.join('');
    search('the debug log', log);

    const all = (await Promise.all(tables.map(({ s: sc, n }) => t.sql<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${sc}"."${n}" x`)))).flat();
    expect(all.some((r) => r.j.includes('alice@secrets.test'))).toBe(true); // the dump does hold what is stored
    process.stderr.write(
      `secrets at rest: ${secrets.length} secrets (${secrets.length * 4} forms) searched in ${tables.length} tables (${rows} rows), ` +
        `${files} files (${bytes} bytes) under DATA_DIR, ${log.split('\n').length - 1} log lines at debug\n`,
    );
    expect(tables.length).toBeGreaterThan(20);
    expect(tables.some((x) => x.s === 'pgboss')).toBe(true);
    expect(files).toBeGreaterThan(10);
    expect(log).toMatch(/"level":"info","msg":"request"/);
    expect(found).toEqual([]);
  });
});
