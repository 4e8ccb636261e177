import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, TestApp } from './helpers/test-app';

/**
 * Path ids that name no row: every route answers them exactly as it did when the services parsed
 * the raw strings themselves (status and body), now that the ids arrive parsed from the edge
 * (`IdParam`). The expected answers are in `fixtures/path-ids.json`, recorded from the code before
 * the move; `PATH_IDS_RECORD=1` rewrites it (review the diff: no 500, 404s name their resource).
 */
const FIXTURE = join(__dirname, 'fixtures', 'path-ids.json');

/** Not ids (404 for the resource, or what the route does with "no such row"), and ids of no row. */
const BAD = ['abc', '0', '-1', '1.5', '%2B1', '1e3', '2147483648', '99999999999', '999999'];
/** Only on reads: a leading zero still names the row (`01` is 1). */
const READ_ONLY = ['01'];

/**
 * What is recorded of an answer: an error's whole body; of a success, only which row it is (`id`) or
 * how many rows (a list), so that the wire format can change without touching this spec.
 */
function summary(status: number, body: unknown): unknown {
  if (status >= 300) return body;
  if (Array.isArray(body)) return { length: body.length };
  if (body && typeof body === 'object' && 'id' in body && !('message' in body)) return { id: body.id };
  return body;
}

type Probe = [method: 'get' | 'put' | 'post' | 'delete', path: string, body?: Record<string, unknown>];

describe('path ids parsed at the edge', () => {
  let t: TestApp;
  let probes: Probe[];
  let name: (path: string) => string;

  beforeAll(async () => {
    t = await startTestApp();
    const api = (m: 'get' | 'post', path: string, body: Record<string, unknown> = {}) =>
      t.http[m](`/api/v3${path}`).set('PRIVATE-TOKEN', t.root.token).send(body);
    const p = (await api('post', '/projects', { name: 'ids', visibility_level: 20 })).body;
    const issue = (await api('post', `/projects/${p.id}/issues`, { title: 'an issue' })).body;
    const snippet = (await api('post', `/projects/${p.id}/snippets`, { title: 's', file_name: 'a.txt', code: 'x', visibility_level: 20 })).body;
    const g = (await api('post', '/groups', { name: 'idsgroup', path: 'idsgroup' })).body;
    const key =
      'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDJ2Zq0yTg8Ck1Jf0ZpYlX0JqgUuBfGlJmCjvZqmCmWbFm0yPo0S0Ob1ijJ5N2KDqWxG3dnuLq4kFmWnWfKQe8Vqq1n3rZBXSnw9PyhNHg5mIq7W8N4oFnJpF/VvCtLUVNtDRD3Xt0yJmYz8eQkE7xqnLhd/ZsVx7kKaQ4xY6vEwWDBtCo4Qj7+1Q3q8w2q0gvVQ2HmvF4QeAPRZzNyHbzUZ8WvzVqJkgmX3e4U6O8U5LW0rIHRr0FcuK0XK0O4N9zqg1QmQhb7YHcFsCP6sB1mXLkF9qgRj3mV9k0a9o8t4rK4vG0LaXk5J1uU0M0DkYv6r4w8p2nNNcxZpGQG9b7p probe';
    const P = `/projects/${p.id}`;
    // ids of the fixture's rows vary with the database: the recorded keys name them
    name = (path) =>
      path
        .replace(`${P}/`, '/projects/:p/')
        .replace(`/groups/${g.id}/`, '/groups/:g/')
        .replace(`/users/${t.root.id}/`, '/users/:root/')
        .replace(`/issues/${issue.id}/`, '/issues/:issue/')
        .replace(`/snippets/${snippet.id}/`, '/snippets/:snippet/');
    const one = (path: string, body?: Record<string, unknown>, write = true): Probe[] => {
      const values = write ? BAD : [...BAD, ...READ_ONLY];
      return values.map((v) => [body && write ? 'put' : 'get', path.replace('X', v), body] as Probe);
    };
    const m = (method: Probe[0], path: string, body?: Record<string, unknown>): Probe[] => BAD.map((v) => [method, path.replace('X', v), body] as Probe);
    probes = [
      ...one('/users/X', undefined, false),
      ...m('put', '/users/X', { name: 'n' }),
      ...m('delete', '/users/X'),
      ...m('put', '/users/X/block'),
      ...m('put', '/users/X/unblock'),
      ...one('/users/X/keys', undefined, false),
      ...m('post', '/users/X/keys', { title: 'k', key }),
      ...m('delete', `/users/X/keys/1`),
      ...m('delete', `/users/${t.root.id}/keys/X`),
      ...one('/user/keys/X', undefined, false),
      ...m('delete', '/user/keys/X'),
      ...one('/keys/X', undefined, false),
      ...one('/users/X/emails', undefined, false),
      ...m('post', '/users/X/emails', { email: 'probe@example.com' }),
      ...m('delete', `/users/X/emails/1`),
      ...m('delete', `/users/${t.root.id}/emails/X`),
      ...one('/user/emails/X', undefined, false),
      ...m('delete', '/user/emails/X'),
      ...one('/groups/X', undefined, false),
      ...one('/groups/X/projects', undefined, false),
      ...m('post', `/groups/${g.id}/projects/X`),
      ...m('post', '/projects/user/X', { name: 'for-user' }),
      ...one(`${P}/milestones/X`, undefined, false),
      ...m('put', `${P}/milestones/X`, { title: 't' }),
      ...one(`${P}/milestones/X/issues`, undefined, false),
      ...m('post', `${P}/labels/X/subscription`),
      ...m('delete', `${P}/labels/X/subscription`),
      ...one(`${P}/members/X`, undefined, false),
      ...m('put', `${P}/members/X`, { access_level: 30 }),
      ...m('delete', `${P}/members/X`),
      ...one(`/groups/${g.id}/members/X`, undefined, false),
      ...m('delete', `/groups/${g.id}/members/X`),
      ...one(`${P}/hooks/X`, undefined, false),
      ...one(`${P}/hooks/X/events`, undefined, false),
      ...m('put', `${P}/hooks/X`, { url: 'http://example.com/h' }),
      ...m('delete', `${P}/hooks/X`),
      ...one('/hooks/X', undefined, false),
      ...one('/hooks/X/events', undefined, false),
      ...m('delete', '/hooks/X'),
      ...one(`${P}/snippets/X`, undefined, false),
      ...one(`${P}/snippets/X/raw`, undefined, false),
      ...m('put', `${P}/snippets/X`, { title: 't' }),
      ...m('delete', `${P}/snippets/X`),
      ...one(`${P}/issues/X/notes`, undefined, false),
      ...one(`${P}/issues/${issue.id}/notes/X`, undefined, false),
      ...m('post', `${P}/issues/X/notes`, { body: 'b' }),
      ...m('put', `${P}/issues/${issue.id}/notes/X`, { body: 'b' }),
      ...m('delete', `${P}/issues/${issue.id}/notes/X`),
      ...one(`${P}/snippets/X/notes`, undefined, false),
      ...one(`${P}/snippets/${snippet.id}/notes/X`, undefined, false),
      ...one(`${P}/merge_requests/X/notes`, undefined, false),
      ...one(`${P}/builds/X`, undefined, false),
      ...one(`${P}/builds/X/trace`, undefined, false),
      ...one(`${P}/builds/X/artifacts`, undefined, false),
      ...m('post', `${P}/builds/X/cancel`),
      ...m('post', `${P}/builds/X/retry`),
      ...m('post', `${P}/builds/X/erase`),
      ...one(`${P}/pipelines/X`, undefined, false),
      ...m('post', `${P}/pipelines/X/retry`),
      ...m('post', `${P}/pipelines/X/cancel`),
      ...one('/runners/X', undefined, false),
      ...m('put', '/runners/X', { description: 'd' }),
      ...m('delete', '/runners/X'),
      ...m('delete', `${P}/runners/X`),
      ...one(`${P}/issues/X`, undefined, false),
      ...m('put', `${P}/issues/X`, { title: 't' }),
      ...m('delete', `${P}/issues/X`),
      ...m('post', `${P}/issues/X/move`, { to_project_id: p.id }),
      ...m('post', `${P}/issues/X/subscription`),
      ...one(`${P}/merge_requests/X`, undefined, false),
      ...one(`${P}/merge_request/X`, undefined, false),
      ...one(`${P}/merge_requests/X/changes`, undefined, false),
      ...one(`${P}/merge_requests/X/commits`, undefined, false),
      ...one(`${P}/merge_requests/X/closes_issues`, undefined, false),
      ...m('put', `${P}/merge_requests/X`, { title: 't' }),
      ...m('put', `${P}/merge_requests/X/merge`),
      ...m('post', `${P}/merge_requests/X/subscription`),
      // project refs: numbers, NAMESPACE%2FPATH, and what names no project
      ...['abc', '0', '99999999999', '999999', 'root%2Fids', 'root%2Fnope', 'nope%2Fids', '%2Fids', 'root%2F'].flatMap((v): Probe[] => [
        ['get', `/projects/${v}`],
        ['get', `/projects/${v}/issues/${issue.id}`],
        ['get', `/projects/${v}/issues/abc`],
        ['get', `/projects/${v}/milestones/abc`],
      ]),
    ];
  });
  afterAll(() => t.close());

  it('answers every bad or unknown id exactly as recorded', async () => {
    const seen: Record<string, [number, unknown]> = {};
    for (const [method, path, body] of probes) {
      const req = t.http[method](`/api/v3${path}`).set('PRIVATE-TOKEN', t.root.token);
      const res = await (body ? req.send(body) : req);
      const text = res.type === 'application/json' ? summary(res.status, res.body) : res.text;
      seen[`${method.toUpperCase()} ${name(path)}`] = [res.status, text];
    }
    if (process.env.PATH_IDS_RECORD === '1') writeFileSync(FIXTURE, JSON.stringify(seen, null, 1) + '\n');
    const expected = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, [number, unknown]>;
    expect(Object.keys(seen).length).toBeGreaterThan(500);
    const differing = [...new Set([...Object.keys(expected), ...Object.keys(seen)])]
      .filter((k) => JSON.stringify(seen[k]) !== JSON.stringify(expected[k]))
      .map((k) => ({ request: k, answered: seen[k], recorded: expected[k] }));
    expect(differing).toEqual([]);
  });
});
