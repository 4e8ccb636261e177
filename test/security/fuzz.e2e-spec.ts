import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Test } from 'supertest';
import { ci, waitFor } from '../helpers/ci';
import { Json, planning } from '../helpers/planning';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

/**
 * Fuzzing (issue 16, point 3): a seeded property-based generator (fast-check) sends hostile requests
 * to every route of the OpenAPI document (plus git smart HTTP and the GitLab Pages hosts) as an
 * administrator, a project member and anonymously. Property: no response ≥ 500, no body with a stack
 * trace, SQL, an error class name or a file-system path, every API error a GitLab `{"message": ...}`
 * body; on a Pages host, never the API (no JSON, no cookie) and never a byte from outside the site;
 * /-/readiness green after.
 *
 *   FUZZ_RUNS=n   number of requests (default 2,000; `npm run test:fuzz` sends 10,000)
 *   FUZZ_SEED=s   replays a run (the seed is printed at the start and on failure)
 *   FUZZ_COLLECT=1  keeps going after a failure and lists every failing request at the end
 *   FUZZ_LOG_LEVEL=error  shows the server's own log (the cause of a 500)
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
// `npm test` (and so CI) runs a fixed seed, so that a landing never depends on luck; `npm run test:fuzz`
// (FUZZ_RANDOM=1) draws a new one each run, to find what the fixed one does not
const SEED =
  process.env.FUZZ_SEED !== undefined
    ? Number(process.env.FUZZ_SEED)
    : process.env.FUZZ_RANDOM === '1'
      ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0
      : 20261123;
const COLLECT = process.env.FUZZ_COLLECT === '1';
const PAGES_DOMAIN = 'pages.fuzz.test';
/** In a file beside the site (DATA_DIR/pages/): a Pages answer holding it read outside its site. */
const OUTSIDE_SITE = 'FUZZ-OUTSIDE-THE-SITE';
const BATCH = 4;

type Method = 'get' | 'post' | 'put' | 'delete' | 'patch';
interface Route {
  method: Method;
  path: string; // OpenAPI template, e.g. /api/v3/projects/{id}/issues/{issue_id}
  params: string[];
  query: { name: string; type: string }[];
  body?: Record<string, { type?: string; format?: string }>;
}

// ---- hostile values
const TWO63 = '9223372036854775808';
const HOSTILE_IDS = [
  '-1',
  '0',
  TWO63,
  '9223372036854775807',
  '18446744073709551616',
  '1e400',
  '1.5',
  '-0',
  '0x10',
  'NaN',
  'Infinity',
  'abc',
  ' 1',
  '1 ',
  '１',
  '%00',
  '1%00',
  '../',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '%',
  '%ZZ',
  '%C0%AF',
  '%FF',
  '%E0%A4%A',
  'null',
  'undefined',
  '[]',
  '{}',
  "1' OR '1'='1",
  '1;DROP TABLE users',
  '$(id)',
  '`id`',
];
const LONG = 'a'.repeat(4096);
const HOSTILE_REFS = [
  '--upload-pack=x',
  '--upload-pack=touch /tmp/pwn',
  '-c',
  '-c core.sshCommand=x',
  '--output=/tmp/x',
  '-n',
  'a..b',
  'master..feature',
  'master...feature',
  'HEAD~99999999',
  'HEAD^{tree}',
  'HEAD@{1}',
  '@{-1}',
  'master@{1.year.ago}',
  'refs/../x',
  'refs/heads/../../config',
  '../../config',
  '.git/config',
  'master%00',
  'mas%00ter',
  '\u0000',
  LONG,
  `${LONG}/${LONG}`,
  'master:README.md',
  ':/',
  '*',
  '?',
  '[',
  '\\',
  '~',
  'x.lock',
  '/',
  '//',
  '.',
  '..',
  'HEAD',
  'refs/heads/master',
  'a\nb',
  ' master',
  '$(id)',
  '%2F..%2F..%2Fetc%2Fpasswd',
  'README.md%00.txt',
];
const HOSTILE_PAGES = ['-1', '0', '1.5', '1e400', TWO63, '999999999999', 'abc', '', '%00', '[]', '2147483648', '-2147483649'];
const HOSTILE_DATES = [
  '2100-01-01',
  '0000-00-00',
  '1e400',
  '9999-99-99',
  '2016-02-30',
  '-1',
  'yesterday',
  '1970-01-01T00:00:00Z',
  '275760-09-13',
  '2016-01-01T25:61:61Z',
  '',
];
const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '%00',
  '\ud800',
  '💥',
  'x'.repeat(70000),
  "'; SELECT 1; --",
  '{{7*7}}',
  '${jndi:x}',
  '\r\nX-Injected: 1',
];
const JSON_WEIRD: unknown[] = [
  null,
  [],
  [1, 2],
  [null],
  {},
  { a: 1 },
  { $gt: '' },
  true,
  false,
  -1,
  0,
  1.5,
  9223372036854775808,
  1e308,
  -1e308,
  '',
  'true',
  '1e400',
  '2100-01-01',
  '0000-00-00',
  [['x']],
];

/** encodeURIComponent that also takes lone surrogates (sent as U+FFFD, as a browser would). */
const pct = (s: string) =>
  Array.from(Buffer.from(s, 'utf8'))
    .map((b) => (/[A-Za-z0-9\-_.!~*'()]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
const ECHOABLE = [...HOSTILE_IDS, ...HOSTILE_REFS, ...HOSTILE_STRINGS, ...HOSTILE_DATES, ...HOSTILE_PAGES]
  .filter((v) => /\//.test(v) && v.length >= 3)
  .sort((a, b) => b.length - a.length);
const anyOf = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const jsonWeird = fc.oneof(
  anyOf(JSON_WEIRD),
  anyOf(HOSTILE_STRINGS),
  anyOf(HOSTILE_IDS),
  anyOf(HOSTILE_DATES),
  anyOf(HOSTILE_REFS),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
);

function valueFor(type: string | undefined, name: string): fc.Arbitrary<unknown> {
  if (/date|_at$|since|until|due/.test(name)) return fc.oneof(anyOf(HOSTILE_DATES), jsonWeird);
  if (/ref|sha|branch|tag|path|file/.test(name)) return fc.oneof(anyOf(HOSTILE_REFS), jsonWeird);
  if (type === 'integer' || type === 'number' || /_id$|^id$|level|limit/.test(name)) return fc.oneof(anyOf(HOSTILE_IDS), anyOf(JSON_WEIRD), fc.integer());
  return jsonWeird;
}

// ---- failure detection
const LEAKS: [string, RegExp][] = [
  ['stack trace', /\bat [\w$.<>]+ \(?[^)\s]*:\d+:\d+\)?|at (?:async )?Object\.|node:internal/],
  [
    'error class',
    /\b(QueryFailedError|TypeError|ReferenceError|RangeError|SyntaxError|EntityNotFound\w*|EntityMetadataNotFound\w*|EntityPropertyNotFound\w*|CannotCreateEntityIdMap\w*|TypeORMError|DriverException|DatabaseError|UnhandledPromiseRejection|InternalServerError)\b/,
  ],
  [
    'SQL',
    /\b(syntax error at or near|invalid input syntax|out of range for type|violates (?:unique|foreign key|not-null|check) constraint|null value in column|current transaction is aborted|relation "[\w.]+"|column "\w+" (?:does not exist|of relation)|SELECT .* FROM |INSERT INTO |UPDATE "\w+" SET)\b/i,
  ],
  // (not preceded by a host or a word: http://gitlab.test/root/project is the root user's namespace)
  ['file-system path', /(?<![\w.:-])(\/tmp\/|\/work\/|\/home\/|\/root\/|\/usr\/lib\/|\/var\/)|node_modules|\/src\/[\w/-]+\.ts|\/dist\/[\w/-]+\.js/],
];

function describeProblem(status: number, text: string, contentType: string, isApi: boolean): string | undefined {
  if (status >= 500) return `status ${status}`;
  // the server may echo what it was sent (e.g. "No user id or username for: --output=/tmp/x"): that is no leak
  const scrubbed = ECHOABLE.reduce((acc, v) => acc.split(v).join('<sent>').split(JSON.stringify(v).slice(1, -1)).join('<sent>'), text);
  for (const [what, re] of LEAKS) {
    const m = re.exec(scrubbed);
    if (m) return `${what} in body: ${JSON.stringify(scrubbed.slice(Math.max(0, m.index - 60), m.index + 80))}`;
  }
  if (isApi && status >= 400) {
    if (!contentType.startsWith('application/json')) return `error body of type ${contentType || '(none)'}`;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return 'error body is not JSON';
    }
    if (!body || typeof body !== 'object' || !('message' in body || 'error' in body)) return `error body without message: ${text.slice(0, 200)}`;
    if ('statusCode' in (body as object)) return `Nest default error body: ${text.slice(0, 200)}`;
  }
  return undefined;
}

describe('security: fuzzing every route', () => {
  let t: TestApp;
  let routes: Route[];
  const actors: Record<string, TestUser | undefined> = {};
  const valid: Record<string, string[]> = {};
  let gitPaths: string[] = [];
  let pagesPort = 0;
  let pagesProject = '';
  let secretKey = '';
  const failures: string[] = [];
  let sent = 0;
  const statuses: Record<string, number> = {};

  beforeAll(async () => {
    process.stderr.write(`fuzz: seed ${SEED}, ${RUNS} requests (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} to replay)\n`);
    t = await startTestApp({
      QUEUE_POLL_SECONDS: '0.5',
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_RETRY_LIMIT: '0',
      LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'silent',
      PAGES_DOMAIN,
    });
    await t.app.app.listen(0, '127.0.0.1'); // Pages requests are sent raw (node:http), paths exactly as generated
    pagesPort = (t.app.app.getHttpServer().address() as { port: number }).port;
    const api = planning(t);
    const c = ci(t);
    const doc = (await t.http.get('/api/v3/openapi.json').expect(200)).body;
    routes = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const params = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path').map((p) => p.name as string);
        const query = ((op.parameters ?? []) as Json[])
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name as string, type: (p.schema?.type as string) ?? 'string' }));
        let body: Route['body'];
        const schema = op.requestBody?.content?.['application/json']?.schema;
        if (schema) {
          const resolved = schema.$ref ? doc.components.schemas[String(schema.$ref).split('/').pop()!] : schema;
          body = resolved?.properties ?? {};
        }
        routes.push({ method: method as Method, path, params, query, body });
      }
    }

    // a member (master of a CI project with content) and fixtures whose ids the generator may pick
    const member = await t.createUser({ username: 'fuzzmember', email: 'fuzzmember@fuzz.test', password: 'fuzz-member-pw' });
    const victim = await t.createUser({ username: 'fuzzvictim', email: 'fuzzvictim@fuzz.test', password: 'fuzz-victim-pw' });
    await api.put(t.root, `/users/${member.id}`).send({ projects_limit: 100000 }).expect(200);
    actors.admin = t.root;
    actors.member = member;
    actors.anonymous = undefined;
    const p = await c.project(member, 'build:\n  script: echo hi\ntest:\n  script: echo test\n', { visibility_level: 10 });
    await api.post(member, `/projects/${p.id}/repository/branches`).send({ branch_name: 'feature', ref: 'master' }).expect(201);
    await api
      .post(member, `/projects/${p.id}/repository/files`)
      .send({ file_path: 'docs/a.txt', branch_name: 'feature', content: 'x', commit_message: 'feature' })
      .expect(201);
    await api.post(member, `/projects/${p.id}/repository/tags`).send({ tag_name: 'v1', ref: 'master' }).expect(201);
    const issue = await api.issue(member, p.id);
    const note = await api.note(member, p.id, 'issues', issue.id, 'a note');
    const mr = (await api.post(member, `/projects/${p.id}/merge_requests`).send({ title: 'mr', source_branch: 'feature', target_branch: 'master' }).expect(201))
      .body;
    const snippet = await api.snippet(member, p.id);
    const milestone = await api.milestone(member, p.id);
    const label = (await api.post(member, `/projects/${p.id}/labels`).send({ name: 'bug', color: '#ff0000' }).expect(201)).body;
    await api.put(t.root, '/application/settings').send({ allow_local_requests_from_hooks_and_services: true }).expect(200);
    const hook = (await api.post(member, `/projects/${p.id}/hooks`).send({ url: 'http://127.0.0.1:9/hook' }).expect(201)).body;
    await api.post(member, `/projects/${p.id}/variables`).send({ key: 'FUZZ_VAR', value: 'v' }).expect(201);
    const trigger = (await api.post(member, `/projects/${p.id}/triggers`).send({}).expect(201)).body;
    const group = (await api.post(t.root, '/groups').send({ name: 'fuzzgroup', path: 'fuzzgroup' }).expect(201)).body;
    const key = (
      await api
        .post(member, '/user/keys')
        .send({ title: 'k', key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl fuzz@test' })
    ).body;
    const email = (await api.post(member, '/user/emails').send({ email: 'second@fuzz.test' })).body;
    const runner = await c.registerRunner({ description: 'fuzz runner' });
    const build = await waitFor(async () => {
      const r = await c.api.requestBuild(runner.token);
      return r.status === 201 ? (r.body as Json) : undefined;
    }, 'a build');
    await c.api.patchTrace(build.id, build.token, 0, 'trace\n').expect(202);
    const builds = await c.builds(p.id);
    const runnerRow = (await t.sql<Json>('SELECT id FROM ci_runners ORDER BY id LIMIT 1'))[0];

    // a published site of the member's project (as a deploy leaves it), and files beside it that must never be served
    const site = join(t.config.pages.dir, String(p.id), 'public');
    mkdirSync(join(site, 'docs'), { recursive: true });
    writeFileSync(join(site, 'index.html'), '<h1>fuzz site</h1>');
    writeFileSync(join(site, '404.html'), 'site 404');
    writeFileSync(join(site, 'docs', 'index.html'), 'docs');
    writeFileSync(join(t.config.pages.dir, String(p.id), 'secret.txt'), OUTSIDE_SITE);
    writeFileSync(join(t.config.pages.dir, 'secret.txt'), OUTSIDE_SITE);
    pagesProject = p.path.split('/')[1];
    secretKey = t.config.secretKey.toString();

    const S = (...xs: unknown[]) => xs.filter((x) => x !== undefined && x !== null).map(String);
    valid.project = S(p.id, pct(p.path));
    valid.user = S(victim.id, member.id);
    valid.group = S(group.id, 'fuzzgroup');
    valid.issue_id = S(issue.id);
    valid.note_id = S(note.id);
    valid.merge_request_id = S(mr.id);
    valid.snippet_id = S(snippet.id);
    valid.milestone_id = S(milestone.id);
    valid.label_id = S(label.id, 'bug');
    valid.hook_id = S(hook.id);
    valid.build_id = S(...builds.map((b) => b.id));
    valid.runner_id = S(runnerRow?.id);
    valid.key = S('FUZZ_VAR', 'mit');
    valid.key_id = S(key?.id);
    valid.email_id = S(email?.id);
    valid.sha = S(p.sha, 'master', 'feature', 'v1');
    valid.branch = S('master', 'feature');
    valid.tag_name = S('v1');
    valid.token = S(trigger.token);
    valid.format = S('zip', 'tar.gz');
    gitPaths = [`/${p.path}.git`, `/${p.path}`];
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  function validFor(route: Route, param: string): string[] {
    const seg = route.path.split('/')[3]; // projects, users, groups, runners, hooks, keys, user, ...
    if (param === 'id') {
      if (route.path.startsWith('/ci/api/v1/builds')) return valid.build_id;
      if (seg === 'projects') return valid.project;
      if (seg === 'groups') return valid.group;
      if (seg === 'users') return route.path.includes('{uid}') ? (route.path.includes('/keys/') ? valid.key_id : valid.email_id) : valid.user;
      if (seg === 'runners') return valid.runner_id;
      if (seg === 'keys') return valid.key_id;
      if (seg === 'user') return route.path.includes('/keys') ? valid.key_id : valid.email_id;
      if (seg === 'hooks') return [];
      return [];
    }
    if (param === 'user_id' || param === 'uid') return valid.user;
    if (param === 'project_id') return valid.project;
    return valid[param] ?? [];
  }

  /** One generated request. */
  const requestArb = () => {
    const route = fc.constantFrom(...routes);
    return route.chain((r) => {
      const paramArbs = r.params.map((name) => {
        const good = validFor(r, name).filter(() => r.method !== 'delete');
        const hostile = /sha|branch|tag|ref|key|token|format/.test(name)
          ? fc.oneof(anyOf(HOSTILE_REFS), anyOf(HOSTILE_IDS))
          : fc.oneof(anyOf(HOSTILE_IDS), anyOf(HOSTILE_REFS));
        return good.length ? fc.oneof({ arbitrary: anyOf(good), weight: 2 }, { arbitrary: hostile, weight: 3 }) : hostile;
      });
      const queryArb = fc.dictionary(
        fc.constantFrom(...r.query.map((q) => q.name), 'page', 'per_page', 'sudo'),
        fc.oneof(anyOf(HOSTILE_PAGES), anyOf(HOSTILE_DATES), anyOf(HOSTILE_REFS), anyOf(HOSTILE_IDS), fc.constant('1')),
        { maxKeys: 4 },
      );
      const fields = Object.entries(r.body ?? {});
      const objectBody = fields.length
        ? fc.record(Object.fromEntries(fields.map(([k, s]) => [k, valueFor(s.type, k)])), { requiredKeys: [] })
        : fc.dictionary(fc.constantFrom('id', 'title', 'name', 'ref', 'token', 'state'), jsonWeird, { maxKeys: 3 });
      const bodyArb = fc.oneof(
        { weight: 6, arbitrary: objectBody.map((o) => ({ kind: 'json', body: o })) },
        { weight: 1, arbitrary: objectBody.map((o) => ({ kind: 'form', body: o })) },
        { weight: 1, arbitrary: jsonWeird.map((v) => ({ kind: 'json-scalar', body: v })) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom('deep', 'deep-array', 'dupkeys', 'invalid-utf8', 'truncated', 'ct-mismatch', 'ct-xml', 'multipart', 'empty-json')
            .map((kind) => ({ kind, body: undefined })),
        },
        { weight: 1, arbitrary: fc.constant({ kind: 'none', body: undefined }) },
      );
      return fc.record({
        route: fc.constant(r),
        actor: fc.constantFrom('admin', 'member', 'anonymous'),
        params: fc.tuple(...paramArbs, fc.constant(null)),
        encode: fc.boolean(),
        query: queryArb,
        body: ['post', 'put', 'patch', 'delete'].includes(r.method) ? bodyArb : fc.constant({ kind: 'none', body: undefined }),
      });
    });
  };

  const gitArb = fc.record({
    route: fc.constant(null),
    actor: fc.constantFrom('admin', 'member', 'anonymous'),
    base: fc.constant(0).map(() => gitPaths[0]),
    suffix: fc.constantFrom('/info/refs', '/git-upload-pack', '/git-receive-pack', '/HEAD', '/objects/info/packs', '/config', '/../../config'),
    service: fc.oneof(fc.constantFrom('git-upload-pack', 'git-receive-pack'), anyOf(HOSTILE_REFS)),
    body: fc.oneof(fc.constant(''), anyOf(HOSTILE_REFS), fc.constant('0032want 0000000000000000000000000000000000000000\n00000009done\n')),
  });

  const pagesArb = fc.record({
    host: fc.constantFrom(
      `fuzzmember.${PAGES_DOMAIN}`,
      `FUZZMEMBER.${PAGES_DOMAIN.toUpperCase()}:8080`,
      `fuzzmember.${PAGES_DOMAIN}.`,
      PAGES_DOMAIN,
      `x.fuzzmember.${PAGES_DOMAIN}`,
      `nobody.${PAGES_DOMAIN}`,
    ),
    method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'),
    prefix: fc.constantFrom(
      () => `/${pagesProject}/`,
      () => '/',
      () => `/${pagesProject}/docs/`,
      () => '/api/v3/',
      () => '/ci/api/v1/',
    ),
    segments: fc.array(
      fc.oneof(
        anyOf(HOSTILE_IDS),
        anyOf(HOSTILE_REFS),
        fc.constantFrom(
          '..',
          '%2e%2e',
          '..%2f',
          '%2e%2e%2f',
          '..\\',
          '%5c',
          '%00',
          'index.html',
          'secret.txt',
          '404.html',
          'docs',
          'user',
          'projects',
          '.',
          '%2e',
        ),
      ),
      { maxLength: 5 },
    ),
    token: fc.boolean(),
  });

  /** One request to a Pages host, its path exactly as generated (no client-side normalisation). */
  function pagesRequest(host: string, method: string, path: string, token: string | undefined): Promise<{ status: number; headers: Json; body: string }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { Host: host };
      if (token) headers['PRIVATE-TOKEN'] = token;
      const req = httpRequest({ host: '127.0.0.1', port: pagesPort, method, path, headers, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('latin1') }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  function pathOf(r: Route, values: (string | null)[], encode: boolean): string {
    let i = 0;
    return r.path.replace(/\{(\w+)\}/g, () => {
      const v = values[i++] ?? '';
      const ascii = /^[\x21-\x7e]*$/.test(v) && v.length < 2000;
      return encode || !ascii ? pct(v) : v;
    });
  }

  function build(method: Method, url: string, actor: string, body: { kind: string; body: unknown }): Test {
    let req = t.http[method](url)
      .timeout(30_000)
      .ok(() => true);
    const u = actors[actor];
    if (u) req = req.set('PRIVATE-TOKEN', u.token);
    switch (body.kind) {
      case 'json':
      case 'json-scalar':
        return req.set('Content-Type', 'application/json').send(JSON.stringify(body.body) ?? 'null');
      case 'form': {
        const form = Object.entries(body.body as Json)
          .map(([k, v]) => `${pct(k)}=${pct(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`)
          .join('&');
        return req.set('Content-Type', 'application/x-www-form-urlencoded').send(form);
      }
      case 'deep':
        return req.set('Content-Type', 'application/json').send('{"a":'.repeat(5000) + '1' + '}'.repeat(5000));
      case 'deep-array':
        return req.set('Content-Type', 'application/json').send('['.repeat(5000) + ']'.repeat(5000));
      case 'dupkeys':
        return req.set('Content-Type', 'application/json').send('{"title":"a","title":"b","id":1,"id":"x","name":"n","name":null}');
      case 'invalid-utf8':
        return req
          .set('Content-Type', 'application/json; charset=utf-8')
          .send(Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x22, 0x7d]));
      case 'truncated':
        return req.set('Content-Type', 'application/json').send('{"title": "abc", "description": [1, 2');
      case 'ct-mismatch':
        return req.set('Content-Type', 'text/plain').send('{"title":"x","name":"y"}');
      case 'ct-xml':
        return req.set('Content-Type', 'application/xml').send('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>');
      case 'multipart':
        return req.field('title', 'x').field('name', '%00').attach('file', Buffer.from('data'), 'a.txt');
      case 'empty-json':
        return req.set('Content-Type', 'application/json').send('');
      default:
        return req;
    }
  }

  async function check(what: string, req: Test, isApi: boolean): Promise<void> {
    sent++;
    let problem: string | undefined;
    try {
      const res = await req;
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      problem = describeProblem(
        res.status,
        res.text ?? (Buffer.isBuffer(res.body) ? res.body.toString('latin1') : ''),
        String(res.headers['content-type'] ?? ''),
        isApi,
      );
    } catch (e) {
      problem = `no answer: ${(e as Error).message}`;
    }
    if (problem) {
      const line = `${what} -> ${problem}`;
      failures.push(line);
      if (!COLLECT) throw new Error(`${line}\n(replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
    }
  }

  const short = (v: unknown) => {
    const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
    return s.length > 120 ? `${s.slice(0, 120)}…(${s.length})` : s;
  };

  it(`answers ${RUNS} hostile requests without a 5xx or a leak`, async () => {
    const started = Date.now();
    // the site is there to be asked for (before the API share: it may delete or rename the project): its home and 404 page
    expect((await pagesRequest(`fuzzmember.${PAGES_DOMAIN}`, 'GET', `/${pagesProject}/`, undefined)).body).toBe('<h1>fuzz site</h1>');
    expect(await pagesRequest(`fuzzmember.${PAGES_DOMAIN}`, 'GET', `/${pagesProject}/nope`, undefined)).toMatchObject({ status: 404, body: 'site 404' });
    const gitShare = Math.max(1, Math.round(RUNS / 20));
    const pagesShare = Math.max(1, Math.round(RUNS / 20));
    let pagesServed = 0;
    // the Pages hosts first (the API share may delete or rename the site's project): no 5xx, never the API, never a byte from outside the site
    await fc.assert(
      fc.asyncProperty(pagesArb, async (g) => {
        // paths the HTTP client itself cannot send (control characters) are sent %-encoded
        const path = (g.prefix() + g.segments.join('/')).replace(/[^\x21-\x7e]/g, (ch) => encodeURIComponent(ch));
        const what = `pages ${g.method} ${g.host} ${short(path)}`;
        sent++;
        let problem: string | undefined;
        try {
          const res = await pagesRequest(g.host, g.method, path, g.token ? actors.member!.token : undefined);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 200) pagesServed++;
          if (res.status >= 500) problem = `status ${res.status}`;
          // (431: Node's HTTP parser refuses a URL over 16 kB before any handler, whatever the host, with the one JSON error body)
          else if (res.status !== 431 && String(res.headers['content-type'] ?? '').startsWith('application/json'))
            problem = `an API answer: ${short(res.body)}`;
          else if (res.headers['set-cookie']) problem = 'a cookie';
          else if (res.body.includes(OUTSIDE_SITE) || res.body.includes(secretKey) || /root:.*:0:0:/.test(res.body)) problem = 'a file from outside the site';
          else if (res.body.includes('fuzzmember@fuzz.test') || res.body.includes('"username"')) problem = `API data: ${short(res.body)}`;
        } catch (e) {
          problem = `no answer: ${(e as Error).message}`;
        }
        if (problem) {
          failures.push(`${what} -> ${problem}`);
          if (!COLLECT) throw new Error(`${what} -> ${problem}\n(replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
        }
      }),
      { seed: SEED, numRuns: pagesShare, endOnFailure: true },
    );
    expect(pagesServed).toBeGreaterThan(0); // the share reached the site's files too, not only refusals
    type Generated = ReturnType<typeof requestArb> extends fc.Arbitrary<infer T> ? T : never;
    const one = async (g: Generated) => {
      const qs = Object.entries(g.query)
        .map(([k, v]) => `${pct(k)}=${/^[\x21-\x7e]*$/.test(v) && !g.encode ? v.replace(/[&#]/g, encodeURIComponent) : pct(v)}`)
        .join('&');
      const url = pathOf(g.route, g.params, g.encode) + (qs ? `?${qs}` : '');
      const what = `${g.actor} ${g.route.method.toUpperCase()} ${short(url)} body=${g.body.kind}:${short(g.body.body)}`;
      await check(what, build(g.route.method, url, g.actor, g.body), url.startsWith('/api/') || url.startsWith('/oauth/'));
    };
    // BATCH requests at a time (concurrently: the server must also cope with them interleaved)
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb(), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        await Promise.all(batch.map(one));
      }),
      { seed: SEED, numRuns: Math.ceil((RUNS - gitShare - pagesShare) / BATCH), endOnFailure: true },
    );
    await fc.assert(
      fc.asyncProperty(gitArb, async (g) => {
        const method: Method = g.suffix.startsWith('/git-') ? 'post' : 'get';
        const url = `${g.base}${g.suffix}?service=${pct(g.service)}`;
        let req = t.http[method](url)
          .timeout(30_000)
          .ok(() => true);
        const u = actors[g.actor];
        if (u) req = req.auth(u.username, u.password);
        if (method === 'post') req = req.set('Content-Type', `application/x-${g.suffix.slice(1)}-request`).send(g.body);
        await check(`${g.actor} git ${method.toUpperCase()} ${short(url)} body=${short(g.body)}`, req, false);
      }),
      { seed: SEED, numRuns: gitShare, endOnFailure: true },
    );
    // the over-the-limit body (10 MB) and a 200-deep query string, once each per actor; and the
    // 5,000-deep JSON bodies that overflowed the DTO transformer's stack (500) before bodies got a depth limit
    for (const [kind, url] of [
      ['deep', '/api/v3/projects'],
      ['deep-array', '/api/v3/projects'],
      ['deep', '/ci/api/v1/builds/register'],
      ['deep', '/ci/api/v1/runners/register'],
    ]) {
      const res = await build('post', url, 'member', { kind, body: undefined });
      sent++;
      expect([res.status, res.body]).toEqual([400, { message: '400 Bad request - JSON body nested too deeply' }]);
    }
    // a string field given [null] reached the services as null (POST /users with bio: [null] → 500)
    {
      const res = await t.http
        .post('/api/v3/users')
        .set('PRIVATE-TOKEN', t.root.token)
        .send({ email: 'nullbio@fuzz.test', username: 'nullbio', name: 'n', password: 'password-1234', bio: [null], skype: [null] });
      sent++;
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ username: 'nullbio', bio: null, skype: '' });
    }
    // a required field of a field-map DTO given an invalid value arrived undefined (POST /groups with path NUL → 500, seed 1109550270)
    {
      const res = await t.http.post('/api/v3/groups').set('PRIVATE-TOKEN', t.root.token).type('form').send({ name: 'nul-group', path: '\u0000' });
      sent++;
      expect(res.status).toBe(400);
      expect(res.body.message.path).toEqual(expect.arrayContaining(['is invalid']));
    }
    // a URL over Node's 16 kB header limit was answered by the HTTP parser with an empty body
    {
      const res = await t.http.get(`/api/v3/projects/${'a'.repeat(20_000)}`).ok(() => true);
      sent++;
      expect([res.status, res.headers['content-type'], res.body]).toEqual([431, 'application/json', { message: '431 Request Header Fields Too Large' }]);
    }
    for (const actor of ['admin', 'member', 'anonymous']) {
      await check(
        `${actor} POST issues body over the limit`,
        build('post', `/api/v3/projects/${valid.project[0]}/issues`, actor, { kind: 'json', body: { title: 'x'.repeat(10 * 1024 * 1024 + 1) } }),
        true,
      );
      await check(`${actor} GET projects deep query`, build('get', `/api/v3/projects?${'a['.repeat(200)}=1`, actor, { kind: 'none', body: undefined }), true);
    }
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(
      `fuzz: ${sent} requests over ${routes.length} routes (+ git smart HTTP, Pages hosts) in ${seconds.toFixed(1)} s, seed ${SEED}; statuses ${JSON.stringify(statuses)}\n`,
    );
    if (failures.length) process.stderr.write(`fuzz failures (${failures.length}):\n${[...new Set(failures)].slice(0, 200).join('\n')}\n`);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(RUNS);
    await t.http.get('/-/readiness').expect(200);
  }, 1_800_000);
});
