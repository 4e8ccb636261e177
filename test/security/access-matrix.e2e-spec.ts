import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshServerService } from '../../src/ssh/ssh-server.service';
import { GitCli } from '../helpers/git-cli';
import { SshCli } from '../helpers/ssh-cli';
import { startTestApp, TestApp } from '../helpers/test-app';
import { abilitiesOf, Ctx, expectGlobal, expectProject, forbiddenMarkers, Json, Outcome, Rule, ruleKey, RULES, variantsOf } from './access-rules';
import { Actor, ACTORS, buildFixtures, Fixtures, PROJECTS, ProjectFixture } from './matrix-fixtures';

/**
 * The access matrix (issue 16, point 1): every route of the app, as its own OpenAPI document lists
 * it, called by every actor on every resource, against the expected outcome of the one rules table
 * (access-rules.ts, built on the policy's ability table). Any unclassified route, wrong status, 5xx
 * or leaked marker fails. Destructive writes (rules with `destructive`) are sent only by callers who
 * must be refused; the allowed ones are counted and not sent, and a check after the run proves the
 * refused ones changed nothing. Then the same over git smart HTTP.
 */

interface Case {
  key: string;
  rule: Rule;
  method: string;
  path: string;
  actor: Actor;
  project?: ProjectFixture;
  variant: string;
  expected: Outcome;
}

interface Failure {
  what: string;
  expected: Outcome;
  status: number;
  leak?: string;
  body: string;
}

let seq = 0;
/** GitLab Pages hosts (`<namespace>.PAGES_DOMAIN`): a transport of their own, checked at the end. */
const PAGES_DOMAIN = 'pages.matrix.test';

/** Routes of the app outside the OpenAPI document, and where their access rules are checked. */
const OUTSIDE_THE_DOCUMENT: Record<string, string> = {
  'GET /:namespace/:repo/info/refs': 'git smart HTTP, below',
  'POST /:namespace/:repo/git-upload-pack': 'git smart HTTP, below (clone and fetch)',
  'POST /:namespace/:repo/git-receive-pack': 'git smart HTTP, below (push)',
  'POST /:namespace/:repo/info/lfs/objects/batch': 'Git LFS batch API, below (and lfs.e2e-spec.ts)',
  'POST /:namespace/:repo/info/lfs/objects': "Git LFS's pre-batch API: 501 after git HTTP's access check (lfs.e2e-spec.ts)",
  'GET /:namespace/:repo/info/lfs/objects/:oid': "Git LFS's pre-batch API: 501 after git HTTP's access check (lfs.e2e-spec.ts)",
  'GET /:namespace/:repo/gitlab-lfs/objects/:oid': 'Git LFS object download, below',
  'PUT /:namespace/:repo/gitlab-lfs/objects/:oid/:size': 'Git LFS object upload, below',
  'GET /': 'public HTML page (server name, version, how to sign in and clone), no data (home-page.e2e-spec.ts)',
  'GET /-/health': 'unauthenticated probe, no data (operations.e2e-spec.ts)',
  'GET /-/readiness': 'unauthenticated probe, no data (operations.e2e-spec.ts)',
  'GET /-/metrics': 'metrics, loopback and METRICS_ALLOWED_IPS only (operations.e2e-spec.ts)',
  'GET /:namespace/:project/badges/*path': 'build and coverage badges (SVG), below (and ci-artifacts-badges.e2e-spec.ts)',
};

function paramValue(name: string, path: string, c: Ctx, rule: Rule): string | number {
  const p = c.p;
  const override = rule.scope !== 'skip' ? rule.params?.(c)[name] : undefined;
  if (override !== undefined) return override;
  switch (name) {
    case 'id':
      if (rule.scope === 'project' || path.startsWith('/api/v3/projects/{id}')) return p.id;
      if (path.startsWith('/api/v3/groups')) return c.fx.group.id;
      if (path.startsWith('/ci/api/v1/builds')) return c.fx.build.id;
      throw new Error(`no value for {id} in ${path}`);
    case 'issue_id':
      return c.variant === 'confidential' ? p.confidentialIssueId : p.issueId;
    case 'note_id':
      if (path.includes('/issues/')) return c.variant === 'confidential' ? p.confidentialNoteId : p.issueNoteId;
      if (path.includes('/snippets/')) return p.snippetNoteIds[c.variant as 'private'];
      return p.mrNoteId;
    case 'merge_request_id':
      return p.mrId;
    case 'snippet_id':
      return p.snippetIds[c.variant as 'private'];
    case 'label_id':
      return encodeURIComponent(p.labelName);
    case 'milestone_id':
      return p.milestoneId;
    case 'hook_id':
      return p.hookId;
    case 'token':
      return p.triggerToken;
    case 'key':
      return p.variableKey;
    case 'build_id':
      return c.fx.build.id;
    case 'pipeline_id':
      return c.fx.pipeline.id;
    case 'runner_id':
      return c.fx.runner.id;
    case 'user_id':
      return path.startsWith('/api/v3/groups') ? c.fx.actors.developer.user!.id : c.fx.actors.guest.user!.id;
    case 'sha':
      return p.sha;
    case 'branch':
      return 'feature';
    case 'tag_name':
      return 'v1';
    default:
      throw new Error(`no fixture for {${name}} in ${path}`);
  }
}

function fill(path: string, c: Ctx, rule: Rule): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => String(paramValue(name, path, c, rule)));
}

describe('access matrix (routes × actors × resources)', () => {
  let t: TestApp;
  let fx: Fixtures;
  let routes: { method: string; path: string }[];
  let home: string;
  let cli: GitCli;
  const started = Date.now();

  beforeAll(async () => {
    // the built-in SSH server too: the git part of the matrix runs over both transports
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', PAGES_DOMAIN });
    home = mkdtempSync(join(tmpdir(), 'matrix-git-'));
    cli = await GitCli.listen(t, home);
    fx = await buildFixtures(t);
    console.log(`fixtures built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const doc = (await t.http.get('/api/v3/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    routes = [];
    for (const [path, item] of Object.entries(doc.paths)) for (const method of Object.keys(item)) routes.push({ method, path });
  }, 240_000);

  afterAll(async () => {
    await t?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('classifies every route of the app', () => {
    expect(routes.length).toBeGreaterThan(150);
    const unclassified = routes.map((r) => ruleKey(r.method, r.path)).filter((k) => !RULES[k]);
    expect(unclassified).toEqual([]);
    const stale = Object.keys(RULES).filter((k) => !routes.some((r) => ruleKey(r.method, r.path) === k));
    expect(stale).toEqual([]);
    // Nest's own routes (the Express router): the ones the document leaves out must be known here
    const router = (t.app.app.getHttpAdapter().getInstance() as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } }).router;
    const nest = router.stack.flatMap((l) => (l.route ? Object.keys(l.route.methods).map((m) => `${m.toUpperCase()} ${l.route!.path}`) : []));
    expect(nest.length).toBeGreaterThan(150);
    const outside = nest.filter((r) => !/^\w+ \/(api\/v3|ci\/api\/v1|oauth)\//.test(r));
    expect(outside.filter((r) => !OUTSIDE_THE_DOCUMENT[r])).toEqual([]);
    expect(Object.keys(OUTSIDE_THE_DOCUMENT).filter((r) => !outside.includes(r))).toEqual([]);
  });

  it('every actor gets the status of the rules table on every route and resource, and no body leaks', async () => {
    const cases: Case[] = [];
    const skipped: string[] = [];
    const resources = new Set<string>();
    for (const { method, path } of routes) {
      const key = ruleKey(method, path);
      const rule = RULES[key];
      if (!rule || rule.scope === 'skip') {
        skipped.push(key);
        continue;
      }
      for (const actor of ACTORS.map((a) => fx.actors[a])) {
        if (rule.scope === 'project') {
          for (const p of PROJECTS.map((n) => fx.projects[n])) {
            for (const variant of variantsOf(rule)) {
              resources.add(`${p.name}/${variant}`);
              cases.push({ key, rule, method, path, actor, project: p, variant, expected: expectProject(rule, actor, p, variant) });
            }
          }
        } else {
          resources.add('instance');
          cases.push({ key, rule, method, path, actor, variant: '-', expected: expectGlobal(rule, actor, fx) });
        }
      }
    }
    const forbidden = new Map(ACTORS.map((a) => [a, forbiddenMarkers(fx.actors[a], fx)]));
    const failures: Failure[] = [];
    let run = 0;
    let destructiveSkipped = 0;
    const timeByRoute = new Map<string, number>();
    // positive control: each kind of marker must show up for the callers allowed to see it, so that its absence elsewhere means something
    const priv = fx.projects.private;
    const controls = [
      ...priv.markers.project.slice(0, 2),
      priv.markers.confidential[0],
      priv.markers.snippet.private[1],
      ...priv.markers.master,
      ...priv.markers.build,
      ...fx.developerMarkers,
      ...fx.group.markers,
    ];
    const unseen = new Set(controls);
    const runCase = async (k: Case) => {
      if (k.rule.scope === 'skip') return;
      if (k.rule.destructive && k.expected === 'ok') {
        destructiveSkipped++;
        return;
      }
      const ctx: Ctx = { fx, p: k.project ?? fx.projects.private, actor: k.actor, n: `${++seq}-${Date.now().toString(36)}`, variant: k.variant };
      const url = fill(k.path, ctx, k.rule);
      let req = t.http[k.method as 'get'](url);
      if (k.actor.token && k.actor.name !== 'anonymous') req = req.set('PRIVATE-TOKEN', k.actor.token);
      const query = k.rule.query?.(ctx);
      if (query) req = req.query(query);
      const body = k.rule.body?.(ctx);
      if (body) req = req.send(body);
      const t0 = Date.now();
      const res = await req;
      timeByRoute.set(k.key, (timeByRoute.get(k.key) ?? 0) + Date.now() - t0);
      run++;
      const text = res.text ?? (Buffer.isBuffer(res.body) ? res.body.toString('latin1') : JSON.stringify(res.body ?? ''));
      const ok =
        k.expected === 'ok'
          ? (res.status >= 200 && res.status < 300) || res.status === 304 || (k.rule.input ?? []).includes(res.status)
          : res.status === k.expected;
      const leak = forbidden.get(k.actor.name)!.find((m) => m && text.includes(m));
      for (const m of unseen) if (text.includes(m)) unseen.delete(m);
      if (!ok || leak || res.status >= 500) {
        failures.push({
          what: `${k.method.toUpperCase()} ${k.path} [${k.project?.name ?? 'instance'}/${k.variant}] as ${k.actor.name} (${url})`,
          expected: k.expected,
          status: res.status,
          leak,
          body: text.slice(0, 200),
        });
      }
    };
    // six callers in parallel over one queue (cases in route order); writes that succeed use fresh names, so order does not matter
    const queue = [...cases];
    const workers = Array.from({ length: 6 }, async () => {
      for (let k = queue.shift(); k; k = queue.shift()) await runCase(k);
    });
    await Promise.all(workers);
    const routeCount = new Set(cases.map((k) => k.key)).size;
    console.log(
      `access matrix: ${routeCount} routes (+${skipped.length} classified as out of scope: ${skipped.join(', ')}) × ${ACTORS.length} actors × ` +
        `${resources.size} resources (${[...resources].join(', ')}) → ${cases.length} cases: ${run} requests sent, ` +
        `${destructiveSkipped} destructive writes by allowed callers not sent, ${failures.length} failures, ${((Date.now() - started) / 1000).toFixed(1)} s since start`,
    );
    expect([...unseen]).toEqual([]);
    // MATRIX_DUMP=<file>: the failures and the slowest routes as JSON, for working through a red run
    if (process.env.MATRIX_DUMP) {
      writeFileSync(process.env.MATRIX_DUMP, JSON.stringify({ failures, slowest: [...timeByRoute].sort((a, b) => b[1] - a[1]).slice(0, 25) }, null, 1));
    }
    expect(failures).toEqual([]);
  }, 600_000);

  it('refused writes changed nothing: every fixture a destructive route names is still there, unchanged', async () => {
    const admin = (path: string) => t.http.get(`/api/v3${path}`).set('PRIVATE-TOKEN', t.root.token);
    const missing: string[] = [];
    const check = async (what: string, path: string, test: (b: Json) => boolean = () => true) => {
      const res = await admin(path);
      if (res.status !== 200 || !test(res.body)) missing.push(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
    };
    for (const p of PROJECTS.map((n) => fx.projects[n])) {
      await check(`${p.name} project`, `/projects/${p.id}`, (b) => b.archived === false && b.visibility_level === p.visibility);
      await check(`${p.name} guest member`, `/projects/${p.id}/members/${fx.actors.guest.user!.id}`, (b) => b.access_level === 10);
      await check(`${p.name} branches`, `/projects/${p.id}/repository/branches`, (b) =>
        ['master', 'feature', 'stable'].every((n) => (b as unknown as Json[]).some((x) => x.name === n && (n !== 'stable' || x.protected))),
      );
      await check(`${p.name} tag`, `/projects/${p.id}/repository/tags/v1`);
      await check(`${p.name} hook`, `/projects/${p.id}/hooks/${p.hookId}`);
      await check(`${p.name} runners token`, `/projects/${p.id}`, (b) => b.runners_token === p.runnersToken);
      if (p.features.issues) {
        await check(`${p.name} issue`, `/projects/${p.id}/issues/${p.issueId}`, (b) => b.state === 'opened' && b.project_id === p.id);
        await check(`${p.name} confidential issue`, `/projects/${p.id}/issues/${p.confidentialIssueId}`, (b) => b.state === 'opened' && b.project_id === p.id);
        const [row] = await t.sql<{ confidential: boolean }>('SELECT confidential FROM issues WHERE id = $1', [p.confidentialIssueId]);
        if (!row?.confidential) missing.push(`${p.name} confidential issue is no longer confidential`);
        await check(`${p.name} issue note`, `/projects/${p.id}/issues/${p.issueId}/notes/${p.issueNoteId}`);
        await check(`${p.name} labels`, `/projects/${p.id}/labels`, (b) => (b as unknown as Json[]).some((l) => l.name === p.labelName));
      }
      if (p.features.mergeRequests) await check(`${p.name} merge request`, `/projects/${p.id}/merge_requests/${p.mrId}`, (b) => b.state === 'opened');
      if (p.features.snippets) {
        for (const v of ['private', 'internal', 'public'] as const) await check(`${p.name} ${v} snippet`, `/projects/${p.id}/snippets/${p.snippetIds[v]}`);
      }
      if (p.features.builds) {
        await check(`${p.name} trigger`, `/projects/${p.id}/triggers/${p.triggerToken}`);
        await check(`${p.name} variable`, `/projects/${p.id}/variables/${p.variableKey}`, (b) => b.value === p.markers.master[2]);
      }
    }
    const priv = fx.projects.private;
    const trace = await admin(`/projects/${priv.id}/builds/${fx.build.id}/trace`);
    if (!trace.text?.includes(priv.markers.build[0])) missing.push('build trace');
    await check('runner', `/runners/${fx.runner.id}`);
    await check("developer's key", `/keys/${fx.developerKeyId}`);
    await check("developer's email", `/users/${fx.actors.developer.user!.id}/emails`, (b) =>
      (b as unknown as Json[]).some((e) => e.id === fx.developerEmailId),
    );
    await check('spare user', `/users/${fx.spare.id}`, (b) => b.state === 'active' && b.is_admin === false);
    await check('group', `/groups/${fx.group.id}`);
    await check('system hook', `/hooks`, (b) => (b as unknown as Json[]).some((h) => h.id === fx.systemHookId));
    expect(missing).toEqual([]);
  }, 120_000);

  it('per-object rules: authors and assignees of issues, notes and snippets (../shared/docs/gitlab-compat.md §3.5)', async () => {
    const A = fx.actors;
    const pub = fx.projects.public;
    const call = (a: Actor, method: 'get' | 'post' | 'put', path: string, body?: Json) => {
      const req = t.http[method](`/api/v3/projects/${pub.id}${path}`).set('PRIVATE-TOKEN', a.token!);
      return body ? req.send(body) : req;
    };
    const got: string[] = [];
    const want: string[] = [];
    const expectStatus = async (what: string, res: Promise<{ status: number }>, status: number) => {
      got.push(`${what}: ${(await res).status}`);
      want.push(`${what}: ${status}`);
    };
    // an outsider's own confidential issue on a public project: theirs to read and update, hidden from other non-members
    const own = (await call(A.outsider, 'post', '/issues', { title: `own-confidential-${seq}`, confidential: true }).expect(201)).body;
    await expectStatus('author reads own confidential issue', call(A.outsider, 'get', `/issues/${own.id}`), 200);
    await expectStatus('author updates own confidential issue', call(A.outsider, 'put', `/issues/${own.id}`, { description: 'mine' }), 200);
    await expectStatus('other non-member reads it', call(A.external, 'get', `/issues/${own.id}`), 404);
    // confidential issues are for reporters and above (8.12–8.17), not guests
    await expectStatus('guest member reads it', call(A.guest, 'get', `/issues/${own.id}`), 404);
    await expectStatus('guest member updates it', call(A.guest, 'put', `/issues/${own.id}`, { description: 'x' }), 404);
    await expectStatus('guest member reads its notes', call(A.guest, 'get', `/issues/${own.id}/notes`), 404);
    await expectStatus('reporter member reads it', call(A.reporter, 'get', `/issues/${own.id}`), 200);
    await expectStatus('reporter member reads its notes', call(A.reporter, 'get', `/issues/${own.id}/notes`), 200);
    // a guest's own confidential issue, and one assigned to a guest: theirs to read, comment on and update
    const guestOwn = (await call(A.guest, 'post', '/issues', { title: `guest-confidential-${seq}`, confidential: true }).expect(201)).body;
    await expectStatus('guest author reads own confidential issue', call(A.guest, 'get', `/issues/${guestOwn.id}`), 200);
    await expectStatus('guest author comments on it', call(A.guest, 'post', `/issues/${guestOwn.id}/notes`, { body: 'mine' }), 201);
    await expectStatus('guest author updates it', call(A.guest, 'put', `/issues/${guestOwn.id}`, { description: 'mine' }), 200);
    await expectStatus('another non-reporter reads it', call(A.outsider, 'get', `/issues/${guestOwn.id}`), 404);
    const toGuest = (await call(A.owner, 'post', '/issues', { title: `to-guest-${seq}`, confidential: true, assignee_id: A.guest.user!.id }).expect(201)).body;
    await expectStatus('guest assignee reads the confidential issue', call(A.guest, 'get', `/issues/${toGuest.id}`), 200);
    await expectStatus('guest assignee reads its notes', call(A.guest, 'get', `/issues/${toGuest.id}/notes`), 200);
    await expectStatus('guest assignee updates it', call(A.guest, 'put', `/issues/${toGuest.id}`, { description: 'assignee' }), 200);
    // assigned to the outsider: readable and updatable by the assignee
    const assigned = (await call(A.owner, 'post', '/issues', { title: `assigned-${seq}`, confidential: true, assignee_id: A.outsider.user!.id }).expect(201))
      .body;
    await expectStatus('assignee reads confidential issue', call(A.outsider, 'get', `/issues/${assigned.id}`), 200);
    await expectStatus('assignee updates it', call(A.outsider, 'put', `/issues/${assigned.id}`, { description: 'assignee' }), 200);
    await expectStatus('non-assignee non-member reads it', call(A.external, 'get', `/issues/${assigned.id}`), 404);
    // a guest's note: the author edits it, a reporter may not, a master may
    const note = (await call(A.guest, 'post', `/issues/${pub.issueId}/notes`, { body: 'by the guest' }).expect(201)).body;
    await expectStatus('note author edits own note', call(A.guest, 'put', `/issues/${pub.issueId}/notes/${note.id}`, { body: 'edited' }), 200);
    await expectStatus("reporter edits the guest's note", call(A.reporter, 'put', `/issues/${pub.issueId}/notes/${note.id}`, { body: 'no' }), 403);
    await expectStatus("master edits the guest's note", call(A.master, 'put', `/issues/${pub.issueId}/notes/${note.id}`, { body: 'ok' }), 200);
    // a reporter's snippet: the author edits it, a developer may not, a master may
    const snip = (await call(A.reporter, 'post', '/snippets', { title: 'by reporter', file_name: 'r.rb', code: 'x', visibility_level: 20 }).expect(201)).body;
    await expectStatus('snippet author edits own snippet', call(A.reporter, 'put', `/snippets/${snip.id}`, { code: 'y' }), 200);
    await expectStatus("developer edits the reporter's snippet", call(A.developer, 'put', `/snippets/${snip.id}`, { code: 'z' }), 403);
    await expectStatus("master edits the reporter's snippet", call(A.master, 'put', `/snippets/${snip.id}`, { code: 'w' }), 200);
    expect(got).toEqual(want);
  }, 60_000);

  it('other credentials: sudo is for admins only and takes the target user’s view; OAuth tokens act as their user, a blocked user’s as nobody', async () => {
    const A = fx.actors;
    const priv = fx.projects.private;
    const got: string[] = [];
    const want: string[] = [];
    const expectStatus = async (what: string, res: PromiseLike<{ status: number; text?: string }>, status: number, hidden: string[] = []) => {
      const r = await res;
      got.push(`${what}: ${r.status}${hidden.some((m) => r.text?.includes(m)) ? ' (leaked)' : ''}`);
      want.push(`${what}: ${status}`);
    };
    const hidden = priv.markers.project;
    await expectStatus('developer with SUDO', t.http.get(`/api/v3/projects/${priv.id}`).set('PRIVATE-TOKEN', A.developer.token!).set('SUDO', 'root'), 403);
    await expectStatus(
      'admin as the outsider',
      t.http.get(`/api/v3/projects/${priv.id}`).set('PRIVATE-TOKEN', t.root.token).set('SUDO', A.outsider.user!.username),
      404,
      hidden,
    );
    await expectStatus(
      'admin as the outsider, issues',
      t.http.get(`/api/v3/projects/${priv.id}/issues/${priv.issueId}`).set('PRIVATE-TOKEN', t.root.token).set('SUDO', String(A.outsider.user!.id)),
      404,
      hidden,
    );
    await expectStatus(
      'admin as the guest, builds',
      t.http.get(`/api/v3/projects/${priv.id}/builds/${fx.build.id}/trace`).set('PRIVATE-TOKEN', t.root.token).set('SUDO', A.guest.user!.username),
      403,
      priv.markers.build,
    );
    const oauth = async (u: { username: string; password: string }) =>
      (await t.http.post('/oauth/token').type('form').send({ grant_type: 'password', username: u.username, password: u.password })).body.access_token as
        string | undefined;
    const outsiderToken = await oauth(A.outsider.user!);
    await expectStatus(
      'outsider by OAuth, private project',
      t.http.get(`/api/v3/projects/${priv.id}`).set('Authorization', `Bearer ${outsiderToken}`),
      404,
      hidden,
    );
    await expectStatus(
      'developer by OAuth, private project',
      t.http.get(`/api/v3/projects/${priv.id}`).set('Authorization', `Bearer ${await oauth(A.developer.user!)}`),
      200,
    );
    // the blocked user cannot get a token, and a token issued before the block is refused
    const blockedGrant = await t.http
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'password', username: A.blocked.user!.username, password: A.blocked.user!.password });
    got.push(`blocked user gets an OAuth token: ${!!blockedGrant.body.access_token}`);
    want.push('blocked user gets an OAuth token: false');
    await t.http.put(`/api/v3/users/${A.outsider.user!.id}/block`).set('PRIVATE-TOKEN', t.root.token).expect(200);
    try {
      await expectStatus('OAuth token of a user blocked since', t.http.get('/api/v3/user').set('Authorization', `Bearer ${outsiderToken}`), 401);
    } finally {
      await t.http.put(`/api/v3/users/${A.outsider.user!.id}/unblock`).set('PRIVATE-TOKEN', t.root.token).expect(200);
    }
    expect(got).toEqual(want);
  }, 60_000);

  describe('git smart HTTP', () => {
    const basic = (a: Actor) => (a.user && a.name !== 'anonymous' ? `Basic ${Buffer.from(`${a.user.username}:${a.token}`).toString('base64')}` : undefined);
    /** What git over HTTP answers an actor that lacks `ability`: 401 without (valid) credentials, 404 invisible, 403 visible. */
    const gitExpect = (a: Actor, p: ProjectFixture, ability: 'download_code' | 'push_code'): number => {
      const ab = abilitiesOf(a, p);
      if (a.name === 'blocked') return 401;
      if (ab.has(ability)) return 200;
      // anonymous callers are asked for credentials; the blocked user's credentials are refused (401) everywhere
      if (a.name === 'anonymous') return 401;
      return ab.has('read_project') ? 403 : 404;
    };

    it('ref advertisement for clone/fetch (upload-pack) and push (receive-pack): every actor, every project', async () => {
      const failures: string[] = [];
      let n = 0;
      for (const p of PROJECTS.map((x) => fx.projects[x])) {
        for (const a of ACTORS.map((x) => fx.actors[x])) {
          for (const [service, ability] of [
            ['git-upload-pack', 'download_code'],
            ['git-receive-pack', 'push_code'],
          ] as const) {
            let req = t.http.get(`/${p.path}.git/info/refs`).query({ service });
            const auth = basic(a);
            if (auth) req = req.set('Authorization', auth);
            const res = await req;
            n++;
            const want = gitExpect(a, p, ability);
            const leak = forbiddenMarkers(a, fx).find((m) => res.text?.includes(m));
            if (res.status !== want || leak)
              failures.push(`${service} ${p.name} as ${a.name}: ${res.status}, expected ${want}${leak ? `, leaked ${leak}` : ''}`);
          }
        }
      }
      // the build token of the private project: its own project only, and never a push
      const ciAuth = `Basic ${Buffer.from(`gitlab-ci-token:${fx.build.token}`).toString('base64')}`;
      for (const p of PROJECTS.map((x) => fx.projects[x])) {
        for (const service of ['git-upload-pack', 'git-receive-pack']) {
          const res = await t.http.get(`/${p.path}.git/info/refs`).query({ service }).set('Authorization', ciAuth);
          n++;
          const want = p.name !== 'private' ? 404 : service === 'git-upload-pack' ? 200 : 403;
          if (res.status !== want) failures.push(`${service} ${p.name} as gitlab-ci-token: ${res.status}, expected ${want}`);
        }
      }
      console.log(`git smart HTTP: ${n} ref advertisements (${PROJECTS.length} projects × ${ACTORS.length} actors × 2 services)`);
      expect(failures).toEqual([]);
    }, 120_000);

    it('Git LFS (issue 39): batch download and upload, object download and upload, per actor and project; other projects’ oids; the build token', async () => {
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      const lfsBatch = (p: ProjectFixture, auth: string | undefined, operation: string, oid: string, size: number) => {
        const req = t.http.post(`/${p.path}.git/info/lfs/objects/batch`).set('Content-Type', 'application/vnd.git-lfs+json');
        if (auth) req.set('Authorization', auth);
        return req.send(JSON.stringify({ operation, objects: [{ oid, size }] }));
      };
      const ownerAuth = basic(fx.actors.owner)!;
      // one object per project, uploaded by its owner; one more on the public project only
      const objects = new Map<string, { oid: string; body: Buffer }>();
      for (const p of PROJECTS.map((x) => fx.projects[x])) {
        const body = Buffer.from(`lfs object of ${p.name}\n`);
        const oid = sha(body);
        await t.http.put(`/${p.path}.git/gitlab-lfs/objects/${oid}/${body.length}`).set('Authorization', ownerAuth).send(body).expect(200);
        objects.set(p.name, { oid, body });
      }
      const foreign = Buffer.from('only on the public project\n');
      await t.http
        .put(`/${fx.projects.public.path}.git/gitlab-lfs/objects/${sha(foreign)}/${foreign.length}`)
        .set('Authorization', ownerAuth)
        .send(foreign)
        .expect(200);

      const failures: string[] = [];
      let n = 0;
      for (const p of PROJECTS.map((x) => fx.projects[x])) {
        const { oid, body } = objects.get(p.name)!;
        for (const a of ACTORS.map((x) => fx.actors[x])) {
          const auth = basic(a);
          const down = gitExpect(a, p, 'download_code');
          const up = gitExpect(a, p, 'push_code');
          const leak = (text: string | undefined) => forbiddenMarkers(a, fx).find((m) => text?.includes(m));
          const check = (what: string, status: number, want: number, text?: string) => {
            n++;
            const leaked = leak(text);
            // the blocked user's credentials keep failing: the sign-in throttle answers 429 after a few, as refused as 401
            const refusedBlocked = a.name === 'blocked' && want === 401 && status === 429;
            if ((status !== want && !refusedBlocked) || leaked)
              failures.push(`LFS ${what} ${p.name} as ${a.name}: ${status}, expected ${want}${leaked ? `, leaked ${leaked}` : ''}`);
          };
          const bd = await lfsBatch(p, auth, 'download', oid, body.length);
          check('batch download', bd.status, down, bd.text);
          if (bd.status === 200 && !JSON.parse(bd.text).objects[0].actions?.download)
            failures.push(`LFS batch download ${p.name} as ${a.name}: no download action`);
          const get = t.http.get(`/${p.path}.git/gitlab-lfs/objects/${oid}`);
          if (auth) get.set('Authorization', auth);
          const got = await get;
          check('object download', got.status, down, got.status === 200 ? undefined : got.text);
          const bu = await lfsBatch(p, auth, 'upload', sha(Buffer.from(`x ${a.name}`)), 3);
          check('batch upload', bu.status, up, bu.text);
          const mine = Buffer.from(`uploaded by ${a.name} to ${p.name}\n`);
          const put = t.http.put(`/${p.path}.git/gitlab-lfs/objects/${sha(mine)}/${mine.length}`);
          if (auth) put.set('Authorization', auth);
          const pr = await put.send(mine);
          check('object upload', pr.status, up, pr.text);
          const stored = (
            await t.sql(`SELECT 1 FROM lfs_objects o JOIN lfs_objects_projects l ON l.lfs_object_id = o.id WHERE o.oid = $1 AND l.project_id = $2`, [
              sha(mine),
              p.id,
            ])
          ).length;
          if ((stored === 1) !== (up === 200)) failures.push(`LFS object upload ${p.name} as ${a.name}: stored ${stored}, expected ${up === 200 ? 1 : 0}`);
          // an oid of another project: never served here, whoever asks
          if (p.name !== 'public') {
            const fg = t.http.get(`/${p.path}.git/gitlab-lfs/objects/${sha(foreign)}`);
            if (auth) fg.set('Authorization', auth);
            const other = await fg;
            check("another project's object", other.status, down === 200 ? 404 : down, other.text);
          }
        }
      }
      // the build token of the private project: downloads its own project's objects only, never uploads
      const ciAuth = `Basic ${Buffer.from(`gitlab-ci-token:${fx.build.token}`).toString('base64')}`;
      for (const p of PROJECTS.map((x) => fx.projects[x])) {
        const { oid, body } = objects.get(p.name)!;
        const got = await t.http.get(`/${p.path}.git/gitlab-lfs/objects/${oid}`).set('Authorization', ciAuth);
        const want = p.name === 'private' ? 200 : 404;
        n++;
        if (got.status !== want) failures.push(`LFS object download ${p.name} as gitlab-ci-token: ${got.status}, expected ${want}`);
        const up = await lfsBatch(p, ciAuth, 'upload', oid, body.length);
        n++;
        if (up.status !== (p.name === 'private' ? 403 : 404)) failures.push(`LFS batch upload ${p.name} as gitlab-ci-token: ${up.status}`);
      }
      console.log(`Git LFS: ${n} requests (${PROJECTS.length} projects × ${ACTORS.length} actors × batch/object × download/upload, foreign oids, build token)`);
      expect(failures).toEqual([]);
    }, 180_000);

    it('real clone and push per actor: allowed where the table says, refused elsewhere; protected branches and force pushes refused', async () => {
      const failures: string[] = [];
      let n = 0;
      for (const p of (['private', 'internal', 'public'] as const).map((x) => fx.projects[x])) {
        const work = join(home, `w-${p.name}`);
        await cli.ok(['clone', cli.url(p.path, fx.actors.owner.user!.username, fx.actors.owner.token), work]);
        for (const a of ACTORS.map((x) => fx.actors[x])) {
          const creds: [string?, string?] = a.user && a.name !== 'anonymous' ? [a.user.username, a.token] : [];
          const url = cli.url(p.path, ...creds);
          // git asks without credentials first and sends them only when challenged: a public project is read anonymously
          const canFetch = p.visibility === 20 || (a.name !== 'blocked' && abilitiesOf(a, p).has('download_code'));
          const canPush = abilitiesOf(a, p).has('push_code');
          const ls = await cli.run(['ls-remote', url, 'refs/heads/master']);
          n++;
          if ((ls.code === 0) !== canFetch) failures.push(`fetch ${p.name} as ${a.name}: exit ${ls.code}, expected ${canFetch ? 'success' : 'refusal'}`);
          // what the server sent (git repeats the URL it was given, which names the project)
          const said = ls.stderr.split(url).join('').split(p.path).join('');
          const leaked = forbiddenMarkers(a, fx).find((m) => said.includes(m));
          if (ls.code !== 0 && leaked) failures.push(`fetch ${p.name} as ${a.name}: leaked ${leaked} in ${said}`);
          await cli.ok(['checkout', '-q', '-B', `push-${a.name}`, 'origin/master'], work);
          await cli.commit(work, { [`${a.name}.txt`]: `${a.name}\n` }, `by ${a.name}`);
          const push = await cli.run(['push', url, `HEAD:refs/heads/push-${a.name}`], work);
          n++;
          if ((push.code === 0) !== canPush) failures.push(`push ${p.name} as ${a.name}: exit ${push.code}, expected ${canPush ? 'success' : 'refusal'}`);
        }
        // the protected branch "stable": developers refused, masters allowed, force pushes refused for everyone
        const dev = cli.url(p.path, fx.actors.developer.user!.username, fx.actors.developer.token);
        const master = cli.url(p.path, fx.actors.master.user!.username, fx.actors.master.token);
        await cli.ok(['fetch', '-q', master, 'stable'], work);
        await cli.ok(['checkout', '-q', '-B', 'stable-work', 'FETCH_HEAD'], work);
        await cli.commit(work, { 'stable.txt': `stable ${p.name}\n` }, 'stable change');
        const byDev = await cli.run(['push', dev, 'HEAD:refs/heads/stable'], work);
        if (byDev.code === 0) failures.push(`developer pushed to protected stable of ${p.name}`);
        const byMaster = await cli.run(['push', master, 'HEAD:refs/heads/stable'], work);
        if (byMaster.code !== 0) failures.push(`master refused on protected stable of ${p.name}: ${byMaster.stderr}`);
        await cli.ok(['reset', '-q', '--hard', 'HEAD~1'], work);
        await cli.commit(work, { 'rewrite.txt': 'rewrite\n' }, 'rewrite');
        const force = await cli.run(['push', '--force', master, 'HEAD:refs/heads/stable'], work);
        if (force.code === 0) failures.push(`master force-pushed protected stable of ${p.name}`);
        n += 3;
      }
      // the CI build token (gitlab-ci-token + the private project's token) reads its own project only and never pushes
      const priv = fx.projects.private;
      const ciUrl = (p: ProjectFixture) => cli.url(p.path, 'gitlab-ci-token', fx.build.token);
      if ((await cli.run(['ls-remote', ciUrl(priv)])).code !== 0) failures.push('gitlab-ci-token cannot fetch its own project');
      // another non-public project: refused (a public one is read anonymously before any credential is sent)
      if ((await cli.run(['ls-remote', ciUrl(fx.projects.internal)])).code === 0) failures.push('gitlab-ci-token of the private project fetched internal');
      const work = join(home, 'w-private');
      await cli.ok(['checkout', '-q', '-B', 'ci-push', 'origin/master'], work);
      await cli.commit(work, { 'ci.txt': 'ci\n' }, 'by the build token');
      if ((await cli.run(['push', ciUrl(priv), 'HEAD:refs/heads/ci-push'], work)).code === 0) failures.push('gitlab-ci-token pushed');
      n += 4;
      console.log(`git smart HTTP: ${n} real git operations (clone/fetch, push, protected branch, force push, CI token)`);
      expect(failures).toEqual([]);
    }, 300_000);
  });
  describe('git over SSH', () => {
    it("clone/fetch and push per actor and project, with each actor's own key: the same answers as smart HTTP", async () => {
      const ssh = SshCli.of(t.app.app.get(SshServerService), home);
      const keys = new Map<string, string>();
      for (const a of ACTORS.map((x) => fx.actors[x])) {
        if (!a.user || a.name === 'anonymous') continue;
        const k = await ssh.keygen(`matrix-${a.name}`);
        // added by the administrator: the blocked user cannot add one, but a key added before a block must not work
        await t.http.post(`/api/v3/users/${a.user.id}/keys`).set('PRIVATE-TOKEN', t.root.token).send({ title: 'matrix', key: k.pub }).expect(201);
        keys.set(a.name, k.file);
      }
      const failures: string[] = [];
      let n = 0;
      const notFound = 'GitLab: The project you were looking for could not be found.';
      for (const p of PROJECTS.map((x) => fx.projects[x])) {
        const work = join(home, `ssh-${p.name}`);
        await ssh.git(keys.get('owner')!, ['clone', '-q', ssh.url(p.path), work]);
        for (const a of ACTORS.map((x) => fx.actors[x])) {
          const key = keys.get(a.name);
          if (!key) continue; // anonymous: SSH has no anonymous access at all
          const ab = abilitiesOf(a, p);
          const blocked = a.name === 'blocked';
          const canFetch = !blocked && ab.has('download_code');
          const canPush = !blocked && ab.has('push_code');
          const ls = await ssh.git(key, ['ls-remote', ssh.url(p.path), 'refs/heads/master']);
          n++;
          if ((ls.code === 0) !== canFetch)
            failures.push(`ssh fetch ${p.name} as ${a.name}: exit ${ls.code}, expected ${canFetch ? 'success' : 'refusal'}: ${ls.stderr}`);
          if (!canFetch && !blocked && !ab.has('read_project') && !ls.stderr.includes(notFound))
            failures.push(`ssh fetch ${p.name} as ${a.name}: not the not-found answer: ${ls.stderr}`);
          const leaked = forbiddenMarkers(a, fx).find((m) => ls.stderr.split(p.path).join('').includes(m));
          if (ls.code !== 0 && leaked) failures.push(`ssh fetch ${p.name} as ${a.name}: leaked ${leaked}`);
          if (p.name === 'disabled') continue;
          await ssh.git(key, ['checkout', '-q', '-B', `ssh-${a.name}`, 'origin/master'], work);
          writeFileSync(join(work, `ssh-${a.name}.txt`), `${a.name}\n`);
          await ssh.git(key, ['add', '.'], work);
          await ssh.git(key, ['commit', '-qm', `ssh by ${a.name}`], work);
          const push = await ssh.git(key, ['push', ssh.url(p.path), `HEAD:refs/heads/ssh-push-${a.name}`], work);
          n++;
          if ((push.code === 0) !== canPush)
            failures.push(`ssh push ${p.name} as ${a.name}: exit ${push.code}, expected ${canPush ? 'success' : 'refusal'}: ${push.stderr}`);
        }
        if (p.name === 'disabled') continue;
        // the protected branch "stable": developers refused, masters allowed
        await ssh.git(keys.get('master')!, ['fetch', '-q', ssh.url(p.path), 'stable'], work);
        await ssh.git(keys.get('master')!, ['checkout', '-q', '-B', 'ssh-stable', 'FETCH_HEAD'], work);
        writeFileSync(join(work, 'ssh-stable.txt'), `stable ${p.name}\n`);
        await ssh.git(keys.get('master')!, ['add', '.'], work);
        await ssh.git(keys.get('master')!, ['commit', '-qm', 'ssh stable change'], work);
        if ((await ssh.git(keys.get('developer')!, ['push', ssh.url(p.path), 'HEAD:refs/heads/stable'], work)).code === 0)
          failures.push(`developer pushed to protected stable of ${p.name} over SSH`);
        const byMaster = await ssh.git(keys.get('master')!, ['push', ssh.url(p.path), 'HEAD:refs/heads/stable'], work);
        if (byMaster.code !== 0) failures.push(`master refused on protected stable of ${p.name} over SSH: ${byMaster.stderr}`);
        n += 2;
      }
      console.log(`git over SSH: ${n} real git operations (fetch, push, protected branch) with the stock OpenSSH client`);
      expect(failures).toEqual([]);
    }, 300_000);

    it('deploy keys (issue 39): fetch, push, a protected branch and a tag, enabled or not, with and without can_push', async () => {
      const ssh = SshCli.of(t.app.app.get(SshServerService), home);
      const owner = fx.actors.owner.user!;
      const notFound = 'GitLab: The project you were looking for could not be found.';
      // a project of its own that the "not enabled" keys are enabled on: valid keys, just not for the matrix's projects
      const elsewhere = await t.http
        .post('/api/v3/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: `dk-elsewhere-${Date.now()}` })
        .expect(201);
      const keys: { name: string; file: string; enabled: boolean; canPush: boolean }[] = [];
      for (const [enabled, canPush] of [
        [true, false],
        [true, true],
        [false, false],
        [false, true],
      ] as const) {
        const name = `dk-${enabled ? 'on' : 'off'}-${canPush ? 'rw' : 'ro'}`;
        const k = await ssh.keygen(`matrix-${name}`);
        const targets = enabled ? PROJECTS.map((x) => fx.projects[x].id) : [elsewhere.body.id as number];
        let id = 0;
        for (const pid of targets) {
          const r = await t.http
            .post(`/api/v3/projects/${pid}/deploy_keys`)
            .set('PRIVATE-TOKEN', owner.token)
            .send({ title: name, key: k.pub, can_push: canPush });
          expect(r.status).toBe(201);
          id ||= r.body.id;
          expect(r.body.id).toBe(id); // one key, enabled on every target
        }
        keys.push({ name, file: k.file, enabled, canPush });
      }
      const failures: string[] = [];
      let n = 0;
      const cloner = keys.find((k) => k.enabled && k.canPush)!;
      for (const p of PROJECTS.map((x) => fx.projects[x])) {
        const work = join(home, `ssh-dk-${p.name}`);
        if ((await ssh.git(cloner.file, ['clone', '-q', ssh.url(p.path), work])).code !== 0) failures.push(`deploy key clone of ${p.name} failed`);
        for (const k of keys) {
          const what = `${p.name} with ${k.name}`;
          const ls = await ssh.git(k.file, ['ls-remote', ssh.url(p.path), 'refs/heads/master']);
          n++;
          if ((ls.code === 0) !== k.enabled) failures.push(`deploy key fetch ${what}: exit ${ls.code}: ${ls.stderr}`);
          if (!k.enabled && !ls.stderr.includes(notFound)) failures.push(`deploy key fetch ${what}: not the not-found answer: ${ls.stderr}`);
          const leaked = forbiddenMarkers(fx.actors.anonymous, fx).find((m) => ls.stderr.split(p.path).join('').includes(m));
          if (ls.code !== 0 && leaked) failures.push(`deploy key fetch ${what}: leaked ${leaked}`);
          await ssh.git(cloner.file, ['checkout', '-q', '-B', `dk-${k.name}`, 'origin/master'], work);
          writeFileSync(join(work, `${k.name}.txt`), `${k.name}\n`);
          await ssh.git(cloner.file, ['add', '.'], work);
          await ssh.git(cloner.file, ['commit', '-qm', `by ${k.name}`], work);
          const push = await ssh.git(k.file, ['push', ssh.url(p.path), `HEAD:refs/heads/dk-push-${k.name}`], work);
          n++;
          if ((push.code === 0) !== (k.enabled && k.canPush)) failures.push(`deploy key push ${what}: exit ${push.code}: ${push.stderr}`);
          if (k.enabled && !k.canPush && !push.stderr.includes('GitLab: This deploy key does not have write access to this project.'))
            failures.push(`deploy key push ${what}: not 8.17's answer: ${push.stderr}`);
          // the protected branch "stable" (no developer pushes): refused to every deploy key
          const stable = await ssh.git(k.file, ['push', ssh.url(p.path), 'HEAD:refs/heads/stable'], work);
          n++;
          if (stable.code === 0) failures.push(`deploy key pushed to the protected stable of ${what}`);
          // a new tag with can_push; moving it never (master and above only)
          const tag = `dk-${k.name}`;
          const created = await ssh.git(k.file, ['push', ssh.url(p.path), `HEAD:refs/tags/${tag}`], work);
          n++;
          if ((created.code === 0) !== (k.enabled && k.canPush)) failures.push(`deploy key tag ${what}: exit ${created.code}: ${created.stderr}`);
          if (created.code === 0) {
            await ssh.git(cloner.file, ['commit', '-qm', 'moved', '--allow-empty'], work);
            const moved = await ssh.git(k.file, ['push', '-f', ssh.url(p.path), `HEAD:refs/tags/${tag}`], work);
            n++;
            if (moved.code === 0) failures.push(`deploy key moved a tag of ${what}`);
          }
        }
      }
      // nothing through the API: the key text is no credential
      const api = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', keys[0].name);
      if (api.status !== 401) failures.push(`API answered ${api.status} to a deploy key's name`);
      console.log(`deploy keys over SSH: ${n} real git operations (fetch, push, protected branch, tags) with the stock OpenSSH client`);
      expect(failures).toEqual([]);
    }, 300_000);
  });

  it('badges (issue 38): build.svg and coverage.svg for every actor and project: readers see them, anyone else 404 (anonymous too), no body leaks', async () => {
    const failures: string[] = [];
    let n = 0;
    for (const p of PROJECTS.map((x) => fx.projects[x])) {
      for (const a of ACTORS.map((x) => fx.actors[x])) {
        for (const kind of ['build', 'coverage']) {
          let req = t.http.get(`/${p.path}/badges/master/${kind}.svg`);
          if (a.token && a.name !== 'anonymous') req = req.set('PRIVATE-TOKEN', a.token);
          const res = await req.buffer(true);
          n++;
          // a stale or blocked credential on a public route is no credential: the blocked user is anonymous here
          const want = abilitiesOf(a, p).has('read_project') ? 200 : 404;
          const text = Buffer.isBuffer(res.body) ? res.body.toString() : res.text;
          const leak = forbiddenMarkers(a, fx).find((m) => text?.includes(m));
          if (res.status !== want || leak)
            failures.push(`${kind}.svg ${p.name} as ${a.name}: ${res.status}, expected ${want}${leak ? `, leaked ${leak}` : ''}`);
          if (want === 200 && !/^image\/svg\+xml/.test(res.headers['content-type'] ?? ''))
            failures.push(`${kind}.svg ${p.name} as ${a.name}: ${res.headers['content-type']}`);
        }
      }
    }
    console.log(`badges: ${n} requests (${PROJECTS.length} projects × ${ACTORS.length} actors × 2 badges)`);
    expect(failures).toEqual([]);
  });

  it("GitLab Pages hosts: a site is the same for every actor (8.17 CE had no Pages access control), and no actor's credentials reach the API there", async () => {
    const failures: string[] = [];
    let n = 0;
    for (const name of PROJECTS) {
      const p = fx.projects[name];
      const site = join(t.config.pages.dir, String(p.id), 'public');
      mkdirSync(site, { recursive: true });
      writeFileSync(join(site, 'index.html'), `site of the ${name} project`);
    }
    for (const a of ACTORS.map((x) => fx.actors[x])) {
      for (const name of PROJECTS) {
        const p = fx.projects[name];
        const [ns, path] = p.path.split('/');
        const host = `${ns}.${PAGES_DOMAIN}`;
        const withToken = (r: ReturnType<typeof t.http.get>) => (a.token ? r.set('PRIVATE-TOKEN', a.token) : r);
        const res = await withToken(t.http.get(`/${path}/`).set('Host', host));
        n++;
        if (res.status !== 200 || res.text !== `site of the ${name} project`) failures.push(`${a.name} ${name} site: ${res.status} ${res.text.slice(0, 80)}`);
        if (res.headers['set-cookie']) failures.push(`${a.name} ${name} site: a cookie`);
        for (const api of [`/api/v3/projects/${p.id}`, `/api/v3/projects/${p.id}/repository/files?file_path=README.md&ref=master`, '/api/v3/user']) {
          const r = await withToken(t.http.get(api).set('Host', host));
          n++;
          const leak = [...forbiddenMarkers(a, fx), ...(a.token ? [a.token] : [])].find((m) => r.text.includes(m));
          if (r.status !== 404 || !String(r.headers['content-type']).startsWith('text/html') || leak || r.text.includes('"id"')) {
            failures.push(`${a.name} ${name} ${api} on ${host}: ${r.status} ${r.headers['content-type']} ${leak ? `leaks ${leak}` : ''}`);
          }
        }
      }
    }
    console.log(`pages hosts: ${n} requests (${PROJECTS.length} projects × ${ACTORS.length} actors × site + 3 API paths)`);
    expect(failures).toEqual([]);
  });
});
