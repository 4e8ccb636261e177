import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Test } from 'supertest';
import { ci, Json, waitFor } from '../helpers/ci';
import type { TestApp, TestUser } from '../helpers/test-app';

/**
 * Fixtures of the access matrix, built once: the actors, the projects (private, internal with public builds, public, and a
 * public one with issues, merge requests, builds and snippets turned off), everything a route
 * parameter can name, and the secret strings (markers) that must never reach a caller who may not see
 * them.
 */

export const ACTORS = ['admin', 'owner', 'master', 'developer', 'reporter', 'guest', 'outsider', 'external', 'anonymous', 'blocked'] as const;
export type ActorName = (typeof ACTORS)[number];
export const PROJECTS = ['private', 'internal', 'public', 'disabled'] as const;
export type ProjectName = (typeof PROJECTS)[number];
/** Member levels given on every project (the owner owns the personal namespace: 50). */
export const MEMBER_LEVEL: Partial<Record<ActorName, number>> = { owner: 50, master: 40, developer: 30, reporter: 20, guest: 10, blocked: 30 };

export interface Actor {
  name: ActorName;
  user?: TestUser;
  /** The private token sent (the blocked user's token still goes out: it must be refused). */
  token?: string;
  admin: boolean;
  external: boolean;
}

export interface ProjectFixture {
  name: ProjectName;
  id: number;
  path: string;
  visibility: number;
  /** Builds and pipelines open to whoever sees the project (the internal one only). */
  publicBuilds: boolean;
  features: { issues: boolean; mergeRequests: boolean; builds: boolean; snippets: boolean };
  runnersToken: string;
  sha: string;
  blobSha: string;
  issueId: number;
  confidentialIssueId: number;
  issueNoteId: number;
  confidentialNoteId: number;
  mrId: number;
  mrNoteId: number;
  snippetIds: { private: number; internal: number; public: number };
  snippetNoteIds: { private: number; internal: number; public: number };
  labelName: string;
  labelId: number;
  milestoneId: number;
  hookId: number;
  /** A deploy key enabled on this project (by its owner). */
  deployKeyId: number;
  triggerToken: string;
  variableKey: string;
  /** Markers of this project: its name, issue titles, notes, snippets, build trace (by what may see them). */
  markers: {
    project: string[];
    confidential: string[];
    snippet: { private: string[]; internal: string[]; public: string[] };
    master: string[];
    build: string[];
  };
}

export interface Fixtures {
  actors: Record<ActorName, Actor>;
  projects: Record<ProjectName, ProjectFixture>;
  /** A user nobody acts as: member routes add and remove them. */
  spare: TestUser;
  group: { id: number; markers: string[] };
  developerKeyId: number;
  developerEmailId: number;
  /** Markers of the developer's keys and secondary email: for the developer and admins only. */
  developerMarkers: string[];
  runner: { id: number; token: string };
  build: { id: number; token: string };
  /** The private project's pipeline (of that build). */
  pipeline: { id: number };
  systemHookId: number;
  /** Private tokens of every user: a token is for its owner's eyes only. */
  tokens: Partial<Record<ActorName, string>>;
}

const tag = () => randomBytes(5).toString('hex');

/** An OpenSSH ed25519 public key made with node:crypto. */
export function sshKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const part = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length, 0);
    return Buffer.concat([len, b]);
  };
  return `ssh-ed25519 ${Buffer.concat([part(Buffer.from('ssh-ed25519')), part(raw)]).toString('base64')} matrix`;
}

const YML = `
build:
  stage: build
  script: make
test:
  stage: test
  script: make test
`;

export async function buildFixtures(t: TestApp): Promise<Fixtures> {
  const API = '/api/v3';
  const as = (u: TestUser | undefined, req: Test) => (u ? req.set('PRIVATE-TOKEN', u.token) : req);
  const call = async (u: TestUser, method: 'get' | 'post' | 'put' | 'delete', path: string, body?: Json, status?: number): Promise<Json> => {
    const res = await as(u, t.http[method](`${API}${path}`)).send(body ?? {});
    const want = status ?? (method === 'post' ? 201 : 200);
    if (res.status !== want) throw new Error(`${method.toUpperCase()} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const root = t.root;
  const mk = (role: string, extra: Json = {}) => t.createUser({ username: `${role}-${tag()}`, name: `Matrix ${role}`, projects_limit: 1000, ...extra });
  const [owner, master, developer, reporter, guest, outsider, external, blocked, spare] = await Promise.all([
    mk('owner'),
    mk('master'),
    mk('developer'),
    mk('reporter'),
    mk('guest'),
    mk('outsider'),
    mk('external', { external: true }),
    mk('blocked'),
    mk('spare'),
  ]);
  const users: Partial<Record<ActorName, TestUser>> = { admin: root, owner, master, developer, reporter, guest, outsider, external, blocked };
  const actors = {} as Record<ActorName, Actor>;
  for (const name of ACTORS) {
    const user = users[name];
    actors[name] = { name, user, token: user?.token, admin: name === 'admin', external: name === 'external' };
  }

  const c = ci(t);
  const projects = {} as Record<ProjectName, ProjectFixture>;
  const visibility: Record<ProjectName, number> = { private: 0, internal: 10, public: 20, disabled: 20 };
  for (const name of PROJECTS) {
    const m = tag();
    const p = await call(owner, 'post', '/projects', { name: `matrix-${name}-${m}`, visibility_level: visibility[name], public_builds: name === 'internal' });
    const id = p.id as number;
    for (const [u, level] of [
      [master, 40],
      [developer, 30],
      [reporter, 20],
      [guest, 10],
      [blocked, 30],
    ] as const) {
      await call(owner, 'post', `/projects/${id}/members`, { user_id: u.id, access_level: level });
    }
    await call(owner, 'post', `/projects/${id}/repository/files`, {
      file_path: 'README.md',
      branch_name: 'master',
      content: `readme ${name}\n`,
      commit_message: 'readme',
    });
    if (name === 'private') {
      await call(owner, 'post', `/projects/${id}/repository/files`, { file_path: '.gitlab-ci.yml', branch_name: 'master', content: YML, commit_message: 'ci' });
    }
    for (const b of ['feature', 'guarded', 'stable']) await call(owner, 'post', `/projects/${id}/repository/branches`, { branch_name: b, ref: 'master' });
    await call(owner, 'put', `/projects/${id}/repository/branches/stable/protect`);
    await call(owner, 'post', `/projects/${id}/repository/files`, {
      file_path: 'feature.txt',
      branch_name: 'feature',
      content: 'feature\n',
      commit_message: 'feature',
    });
    await call(owner, 'post', `/projects/${id}/repository/tags`, { tag_name: 'v1', ref: 'master' });
    const shown = await call(owner, 'get', `/projects/${id}`);
    const commit = await call(owner, 'get', `/projects/${id}/repository/commits/master`);
    const tree = (await call(owner, 'get', `/projects/${id}/repository/tree`)) as unknown as Json[];
    const blobSha = tree.find((e) => e.name === 'README.md')?.id as string;
    const issue = await call(owner, 'post', `/projects/${id}/issues`, { title: `issue-${m}` });
    const conf = await call(owner, 'post', `/projects/${id}/issues`, { title: `confidential-${m}`, description: `secret-desc-${m}`, confidential: true });
    const issueNote = await call(owner, 'post', `/projects/${id}/issues/${issue.id}/notes`, { body: `note-${m}` });
    const confNote = await call(owner, 'post', `/projects/${id}/issues/${conf.id}/notes`, { body: `confnote-${m}` });
    // the merge request would close the confidential issue: its closes_issues is one more place the issue must not show
    const mr = await call(owner, 'post', `/projects/${id}/merge_requests`, {
      source_branch: 'feature',
      target_branch: 'master',
      title: `mr-${m}`,
      description: `Closes #${conf.iid}`,
    });
    const mrNote = await call(owner, 'post', `/projects/${id}/merge_requests/${mr.id}/notes`, { body: `mrnote-${m}` });
    const snippetIds = { private: 0, internal: 0, public: 0 };
    const snippetNoteIds = { private: 0, internal: 0, public: 0 };
    const snippetMarkers = { private: [] as string[], internal: [] as string[], public: [] as string[] };
    for (const [v, level] of [
      ['private', 0],
      ['internal', 10],
      ['public', 20],
    ] as const) {
      const s = await call(owner, 'post', `/projects/${id}/snippets`, {
        title: `snip-${v}-${m}`,
        file_name: `s-${v}.rb`,
        code: `code-${v}-${m}`,
        visibility_level: level,
      });
      snippetIds[v] = s.id;
      snippetNoteIds[v] = (await call(owner, 'post', `/projects/${id}/snippets/${s.id}/notes`, { body: `snipnote-${v}-${m}` })).id;
      snippetMarkers[v] = [`snip-${v}-${m}`, `code-${v}-${m}`, `snipnote-${v}-${m}`];
    }
    const label = await call(owner, 'post', `/projects/${id}/labels`, { name: `label-${m}`, color: '#ff0000' });
    const milestone = await call(owner, 'post', `/projects/${id}/milestones`, { title: `milestone-${m}` });
    // the confidential issue in the label and the milestone: their issue lists and counts are more places it must not show
    await call(owner, 'put', `/projects/${id}/issues/${conf.id}`, { labels: label.name, milestone_id: milestone.id });
    const hook = await call(owner, 'post', `/projects/${id}/hooks`, { url: `http://93.184.216.34/hook-${m}` });
    const deployKey = await call(owner, 'post', `/projects/${id}/deploy_keys`, { title: `deploy-${m}`, key: sshKey() });
    const trigger = await call(owner, 'post', `/projects/${id}/triggers`);
    const variableKey = `VAR_${m.toUpperCase()}`;
    await call(owner, 'post', `/projects/${id}/variables`, { key: variableKey, value: `varvalue-${m}` });
    projects[name] = {
      name,
      id,
      path: p.path_with_namespace,
      visibility: visibility[name],
      publicBuilds: name === 'internal',
      features: { issues: true, mergeRequests: true, builds: true, snippets: true },
      runnersToken: shown.runners_token,
      sha: commit.id,
      blobSha,
      issueId: issue.id,
      confidentialIssueId: conf.id,
      issueNoteId: issueNote.id,
      confidentialNoteId: confNote.id,
      mrId: mr.id,
      mrNoteId: mrNote.id,
      snippetIds,
      snippetNoteIds,
      labelName: label.name,
      labelId: label.id,
      milestoneId: milestone.id,
      hookId: hook.id,
      deployKeyId: deployKey.id,
      triggerToken: trigger.token,
      variableKey,
      markers: {
        project: [`matrix-${name}-${m}`, `issue-${m}`, `note-${m}`, `mr-${m}`, `mrnote-${m}`, `label-${m}`, `milestone-${m}`],
        confidential: [`confidential-${m}`, `secret-desc-${m}`, `confnote-${m}`],
        snippet: snippetMarkers,
        master: [shown.runners_token, trigger.token, `varvalue-${m}`, `hook-${m}`],
        build: [],
      },
    };
  }
  // the "disabled" project: issues, merge requests, builds and snippets turned off after its fixtures exist
  const off = projects.disabled;
  await call(owner, 'put', `/projects/${off.id}`, { issues_enabled: false, merge_requests_enabled: false, builds_enabled: false, snippets_enabled: false });
  off.features = { issues: false, mergeRequests: false, builds: false, snippets: false };

  // a real build of the private project: pipeline from the pushed .gitlab-ci.yml, claimed by its own runner
  const priv = projects.private;
  await waitFor(async () => (await c.builds(priv.id)).length > 0, 'build of the private project', 30_000);
  const runner = await c.registerRunner({ token: priv.runnersToken, description: `runner-${tag()}` });
  const claimed = (await c.api.requestBuild(runner.token)).body as Json;
  if (!claimed?.id) throw new Error('no build claimed');
  const traceMarker = `trace-${tag()}`;
  await c.api.patchTrace(claimed.id, claimed.token, 0, `${traceMarker}\n`).expect(202);
  const artifact = `artifact-${tag()}`;
  await t.http.post(`/ci/api/v1/builds/${claimed.id}/artifacts`).set('BUILD-TOKEN', claimed.token).attach('file', Buffer.from(artifact), 'art.zip').expect(201);
  await c.api.update(claimed.id, { token: runner.token, state: 'success' }).expect(200);
  priv.markers.build.push(traceMarker, artifact);
  const [pipeline] = (await call(owner, 'get', `/projects/${priv.id}/pipelines`)) as unknown as Json[];
  priv.markers.master.push(runner.token);

  // another user's keys, emails; a group; a system hook
  const key = await call(developer, 'post', '/user/keys', { title: `key-${tag()}`, key: sshKey() });
  const email = await call(developer, 'post', '/user/emails', { email: `second-${tag()}@matrix.test` });
  const gm = tag();
  const group = await call(owner, 'post', '/groups', { name: `grp-${gm}`, path: `grp-${gm}`, visibility_level: 0 });
  await call(owner, 'post', `/groups/${group.id}/members`, { user_id: developer.id, access_level: 30 });
  const sysHook = await call(root, 'post', '/hooks', { url: `http://93.184.216.34/sys-${tag()}` });

  // block last: the blocked user's token, a developer of every project, must be refused everywhere
  await call(root, 'put', `/users/${blocked.id}/block`);

  const tokens: Partial<Record<ActorName, string>> = {};
  for (const a of ACTORS) if (users[a]) tokens[a] = users[a].token;
  return {
    actors,
    projects,
    spare,
    group: { id: group.id, markers: [`grp-${gm}`] },
    developerKeyId: key.id,
    developerEmailId: email.id,
    developerMarkers: [key.key.split(' ')[1], email.email],
    runner,
    build: { id: claimed.id, token: claimed.token },
    pipeline: { id: pipeline.id },
    systemHookId: sysHook.id,
    tokens,
  };
}
