import { generateKeyPairSync } from 'node:crypto';
import sshpk from 'sshpk';
import { ci } from './helpers/ci';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * Every list is paginated (spec: "List responses are paginated"): Link and X-Total / X-Total-Pages /
 * X-Per-Page / X-Page / X-Next-Page / X-Prev-Page on every GET list route, and `page`/`per_page`
 * honoured. The lists GitLab 8 answered whole (keys, emails, tags, labels, tree ...) stay whole on the
 * first page when no `per_page` is given.
 */
const API = '/api/v3';
const HEADERS = ['link', 'x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page'];

function sshKey(): string {
  const pem = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }) as string;
  return sshpk.parseKey(pem, 'pem').toString('ssh');
}

describe('Pagination of every list', () => {
  let t: TestApp;
  let dev: TestUser;
  /** `{name}` of a route's path → the value used for it. */
  const ids: Record<string, string> = {};
  let projectId: number;
  let sha: string;
  /** The app's OpenAPI document. */
  let doc: Record<string, unknown>;

  const get = (path: string, token = t.root.token) => t.http.get(`${API}${path}`).set('PRIVATE-TOKEN', token);
  const post = (path: string, body: object = {}, token = t.root.token) =>
    t.http
      .post(`${API}${path}`)
      .set('PRIVATE-TOKEN', token)
      .send(body)
      .expect((r) => {
        if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      });

  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.http.get(`${API}/openapi.json`).expect(200)).body;
    dev = await t.createUser({ username: 'dev', name: 'Dev Eloper', email: 'dev@example.com' });
    const c = ci(t);
    const p = await c.project(t.root, 'test:\n  script: echo hi\n');
    projectId = p.id;
    const P = `/projects/${projectId}`;
    await t.http.put(`${API}/application/settings`).set('PRIVATE-TOKEN', t.root.token).send({ allow_local_requests_from_hooks_and_services: true }).expect(200);
    await post(`${P}/members`, { user_id: dev.id, access_level: 40 });
    // a second file by a second author (two contributors), then a branch with two commits and an MR
    await post(`${P}/repository/files`, { file_path: 'README.md', branch_name: 'master', content: 'hi', commit_message: 'readme' }, dev.token);
    await post(`${P}/repository/branches`, { branch_name: 'feature', ref: 'master' });
    for (const n of [1, 2]) {
      await post(`${P}/repository/files`, { file_path: `f${n}.txt`, branch_name: 'feature', content: `${n}`, commit_message: `f${n}` });
    }
    sha = (await get(`${P}/repository/commits/master`).expect(200)).body.id;
    const mr = await post(`${P}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Feature' });
    const issue = await post(`${P}/issues`, { title: 'An issue' });
    const milestone = await post(`${P}/milestones`, { title: 'v1' });
    const snippet = await post(`${P}/snippets`, { title: 's', file_name: 's.txt', code: 'x', visibility_level: 0 });
    await post(`${P}/issues/${issue.body.id}/notes`, { body: 'n' });
    await post(`${P}/snippets/${snippet.body.id}/notes`, { body: 'n' });
    await post(`${P}/merge_requests/${mr.body.id}/notes`, { body: 'n' });
    await post(`${P}/repository/commits/${sha}/comments`, { note: 'c' });
    await post(`${P}/statuses/${sha}`, { state: 'success' });
    for (const n of [1, 2, 3]) {
      await post(`${P}/labels`, { name: `label${n}`, color: '#ff0000' });
      await post(`${P}/variables`, { key: `VAR${n}`, value: 'v' });
      await post(`${P}/triggers`);
      await post(`${P}/hooks`, { url: `http://127.0.0.1:9/${n}` });
      await post('/hooks', { url: `http://127.0.0.1:9/system/${n}` });
      await post('/user/keys', { title: `k${n}`, key: sshKey() });
      await post('/user/emails', { email: `root${n}@example.com` });
      await post(`${P}/repository/tags`, { tag_name: `v${n}`, ref: 'master' });
    }
    const hooks = (await get(`${P}/hooks`).expect(200)).body;
    const systemHooks = (await get('/hooks').expect(200)).body;
    await c.registerRunner();
    const group = await post('/groups', { name: 'grp', path: 'grp' });
    Object.assign(ids, {
      id: String(projectId),
      issue_id: String(issue.body.id),
      merge_request_id: String(mr.body.id),
      milestone_id: String(milestone.body.id),
      snippet_id: String(snippet.body.id),
      sha,
      hook_id: String(hooks[0].id),
      uid: String(t.root.id),
      query: p.path.split('/')[1],
      system_hook: String(systemHooks[0].id),
      group: String(group.body.id),
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  /** GET list routes of the OpenAPI document (generated from the handlers' declared responses), with their path filled in. */
  function listRoutes(): string[] {
    return documentedLists().map(([path]) =>
      path.replace(/\{(\w+)\}/g, (_, name: string) => {
        if (path.startsWith('/hooks/')) return ids.system_hook;
        if (path.startsWith('/groups/')) return ids.group;
        if (!(name in ids)) throw new Error(`no value for {${name}} in GET ${path}`);
        return ids[name];
      }),
    );
  }

  /** `[path without /api/v3, 200 response]` of every GET whose answer is a JSON array. */
  function documentedLists(): [string, Record<string, unknown>][] {
    const out: [string, Record<string, unknown>][] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>)) {
      const ok = item.get?.responses['200'];
      const schema = (ok?.content as Record<string, { schema?: { type?: string } }> | undefined)?.['application/json']?.schema;
      if (path.startsWith(`${API}/`) && schema?.type === 'array') out.push([path.slice(API.length), ok]);
    }
    return out;
  }

  it('every GET list route is documented as paginated (none answers a bare array)', () => {
    const bare = documentedLists().filter(([, ok]) => !Object.keys(ok.headers ?? {}).includes('Link'));
    expect(bare.map(([k]) => k)).toEqual([]);
    expect(listRoutes().length).toBeGreaterThan(45);
  });

  it('every GET list route answers the Link and X-* headers, with page and per_page honoured', async () => {
    const failures: string[] = [];
    for (const path of listRoutes()) {
      const res = await get(path);
      if (res.status !== 200 || !Array.isArray(res.body)) {
        failures.push(`${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        continue;
      }
      const missing = HEADERS.filter((h) => res.headers[h] === undefined);
      if (missing.length) failures.push(`${path}: no ${missing.join(', ')}`);
      if (res.headers['x-total'] !== undefined && Number(res.headers['x-total']) < res.body.length) failures.push(`${path}: X-Total below the page's length`);
      const one = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=1&page=1`);
      if (one.headers['x-per-page'] !== '1' || one.headers['x-page'] !== '1' || one.body.length > 1) {
        failures.push(`${path}: per_page=1 gave X-Per-Page ${one.headers['x-per-page']}, ${one.body.length} items`);
      }
    }
    expect(failures).toEqual([]);
  });

  /** The lists GitLab 8 answered whole: complete on the first page without `per_page`, and paged with it. */
  const WHOLE: Array<[string, (ids: Record<string, string>) => string, number]> = [
    ['own keys', () => '/user/keys', 3],
    ['own emails', () => '/user/emails', 3],
    ["a user's keys (admin)", (i) => `/users/${i.uid}/keys`, 3],
    ["a user's emails (admin)", (i) => `/users/${i.uid}/emails`, 3],
    ['repository tree', (i) => `/projects/${i.id}/repository/tree`, 2],
    ['contributors', (i) => `/projects/${i.id}/repository/contributors`, 2],
    ['branches', (i) => `/projects/${i.id}/repository/branches`, 2],
    ['tags', (i) => `/projects/${i.id}/repository/tags`, 3],
    ["a commit's diff", (i) => `/projects/${i.id}/repository/commits/${i.sha}/diff`, 1],
    ["a merge request's commits", (i) => `/projects/${i.id}/merge_requests/${i.merge_request_id}/commits`, 2],
    ['labels', (i) => `/projects/${i.id}/labels`, 3],
    ['variables', (i) => `/projects/${i.id}/variables`, 3],
    ['triggers', (i) => `/projects/${i.id}/triggers`, 3],
    ['project hooks', (i) => `/projects/${i.id}/hooks`, 3],
    ['system hooks', () => '/hooks', 3],
  ];

  it.each(WHOLE)('%s: whole on the first page by default, then page/per_page with the headers', async (_name, pathOf, total) => {
    const path = pathOf(ids);
    const all = await get(path).expect(200);
    expect(all.body).toHaveLength(total);
    expect(all.headers).toMatchObject({
      'x-total': String(total),
      'x-total-pages': '1',
      'x-page': '1',
      'x-per-page': '20',
      'x-next-page': '',
      'x-prev-page': '',
    });
    expect(all.headers.link).toBe(
      `<http://gitlab.test/api/v3${path}?page=1&per_page=20>; rel="first", <http://gitlab.test/api/v3${path}?page=1&per_page=20>; rel="last"`,
    );

    const first = await get(`${path}?per_page=1`).expect(200);
    expect(first.body).toEqual(all.body.slice(0, 1));
    expect(first.headers).toMatchObject({ 'x-total': String(total), 'x-total-pages': String(total), 'x-per-page': '1', 'x-page': '1', 'x-prev-page': '' });
    expect(first.headers['x-next-page']).toBe(total > 1 ? '2' : '');

    const last = await get(`${path}?per_page=1&page=${total}`).expect(200);
    expect(last.body).toEqual(all.body.slice(total - 1));
    expect(last.headers).toMatchObject({ 'x-page': String(total), 'x-next-page': '' });
    expect(last.headers['x-prev-page']).toBe(total > 1 ? String(total - 1) : '');

    const past = await get(`${path}?page=2`).expect(200);
    expect(past.body).toEqual([]);
    expect(past.headers).toMatchObject({ 'x-total': String(total), 'x-page': '2', 'x-prev-page': '1' });
  });

  it('licenses: all on the first page without authentication, paged with per_page', async () => {
    const all = await t.http.get(`${API}/licenses`).expect(200);
    const n = all.body.length;
    expect(n).toBeGreaterThan(20);
    expect(all.headers).toMatchObject({ 'x-total': String(n), 'x-per-page': String(n), 'x-total-pages': '1', 'x-next-page': '' });
    const page2 = await t.http.get(`${API}/licenses?per_page=5&page=2`).expect(200);
    expect(page2.body).toEqual(all.body.slice(5, 10));
    expect(page2.headers).toMatchObject({ 'x-total': String(n), 'x-per-page': '5', 'x-page': '2', 'x-prev-page': '1', 'x-next-page': '3' });
    expect(page2.headers.link).toContain('<http://gitlab.test/api/v3/licenses?page=3&per_page=5>; rel="next"');
  });

  it('the Link URLs of a whole-by-default list carry a per_page that answers the same page', async () => {
    const all = await t.http.get(`${API}/licenses`).expect(200);
    const last = /<([^>]+)>; rel="last"/.exec(all.headers.link)![1].replace('http://gitlab.test', '');
    const again = await t.http.get(last).expect(200);
    expect(again.body).toEqual(all.body);
  });

  it('a developer gets the same headers on the lists it may read (tags, branches)', async () => {
    const res = await get(`/projects/${projectId}/repository/tags?per_page=2`, dev.token).expect(200);
    expect(res.body).toHaveLength(2);
    expect(res.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '2', 'x-next-page': '2' });
  });
});
