import type { Test } from 'supertest';
import { ApplicationSettingsService } from '../../src/application-settings/application-settings.service';
import { countQueries, TestApp, TestUser } from './test-app';

/** Shared set-up for the issues, milestones, labels, notes and snippets specs. */
export const API = '/api/v3';
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export type Json = Record<string, any>;

export const LEVEL = { guest: 10, reporter: 20, developer: 30, master: 40 } as const;

/** The owner of the projects, one member per role, a user with no membership, an administrator. */
export interface Team {
  owner: TestUser;
  master: TestUser;
  developer: TestUser;
  reporter: TestUser;
  guest: TestUser;
  stranger: TestUser;
  admin: TestUser;
}

export interface TestProject {
  id: number;
  path_with_namespace: string;
}

let seq = 0;

export function planning(t: TestApp) {
  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  const get = (u: TestUser, path: string) => as(u, t.http.get(`${API}${path}`));
  const post = (u: TestUser, path: string) => as(u, t.http.post(`${API}${path}`));
  const put = (u: TestUser, path: string) => as(u, t.http.put(`${API}${path}`));
  const del = (u: TestUser, path: string) => as(u, t.http.delete(`${API}${path}`));

  async function team(): Promise<Team> {
    const n = ++seq;
    const mk = (role: string) => t.createUser({ username: `${role}${n}`, email: `${role}${n}@planning.test`, name: `${role} ${n}` });
    const [owner, master, developer, reporter, guest, stranger] = await Promise.all(['owner', 'master', 'developer', 'reporter', 'guest', 'stranger'].map(mk));
    for (const u of [owner, stranger]) {
      const res = await put(t.root, `/users/${u.id}`).send({ projects_limit: 1000 });
      if (res.status !== 200) throw new Error(`projects_limit: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return { owner, master, developer, reporter, guest, stranger, admin: t.root };
  }

  /** A project of `team.owner` with every role of the team as a member. */
  async function project(tm: Team, visibility: 0 | 10 | 20, extra: Json = {}): Promise<TestProject> {
    const name = `plan-${++seq}`;
    const res = await post(tm.owner, '/projects').send({ name, visibility_level: visibility, ...extra });
    if (res.status !== 201) throw new Error(`project: ${res.status} ${JSON.stringify(res.body)}`);
    for (const role of ['master', 'developer', 'reporter', 'guest'] as const) {
      const m = await post(tm.owner, `/projects/${res.body.id}/members`).send({ user_id: tm[role].id, access_level: LEVEL[role] });
      if (m.status !== 201) throw new Error(`member: ${m.status} ${JSON.stringify(m.body)}`);
    }
    return { id: res.body.id, path_with_namespace: res.body.path_with_namespace };
  }

  async function issue(u: TestUser, projectId: number, body: Json = {}): Promise<Json> {
    const res = await post(u, `/projects/${projectId}/issues`).send({ title: `issue ${++seq}`, ...body });
    if (res.status !== 201) throw new Error(`issue: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function note(u: TestUser, projectId: number, kind: 'issues' | 'snippets', id: number, body: string): Promise<Json> {
    const res = await post(u, `/projects/${projectId}/${kind}/${id}/notes`).send({ body });
    if (res.status !== 201) throw new Error(`note: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function snippet(u: TestUser, projectId: number, body: Json = {}): Promise<Json> {
    const res = await post(u, `/projects/${projectId}/snippets`).send({
      title: `snippet ${++seq}`,
      file_name: 'hello.rb',
      code: 'puts "hello"',
      visibility_level: 0,
      ...body,
    });
    if (res.status !== 201) throw new Error(`snippet: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function milestone(u: TestUser, projectId: number, body: Json = {}): Promise<Json> {
    const res = await post(u, `/projects/${projectId}/milestones`).send({ title: `milestone ${++seq}`, ...body });
    if (res.status !== 201) throw new Error(`milestone: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** The project's notes on an issue or snippet, as the root user sees them. */
  async function notesOf(projectId: number, kind: 'issues' | 'snippets', id: number): Promise<Json[]> {
    const res = await get(t.root, `/projects/${projectId}/${kind}/${id}/notes?per_page=100`).expect(200);
    return res.body;
  }

  async function eventsOf(projectId: number): Promise<Json[]> {
    const res = await get(t.root, `/projects/${projectId}/events?per_page=100`).expect(200);
    return res.body;
  }

  /** Queries sent by `fn`, measured at the start of a fresh settings-cache window (no cache expiry mid-way). */
  async function measure(fn: () => Promise<unknown>): Promise<number> {
    await t.app.app.get(ApplicationSettingsService).reload();
    return countQueries(t, fn);
  }

  return { as, get, post, put, del, measure, team, project, issue, note, snippet, milestone, notesOf, eventsOf };
}
