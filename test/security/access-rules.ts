import { AccessLevel, NO_ACCESS, PolicyProject, PolicyUser, ProjectAbility, projectAbilities, ProjectAccess, Visibility } from '../../src/common/policy/policy';
import type { Actor, Fixtures, ProjectFixture } from './matrix-fixtures';
import { MEMBER_LEVEL, sshKey } from './matrix-fixtures';

/**
 * The ONE table of expected outcomes: every route of the app (as the OpenAPI document lists it) is
 * classified here, and the expected status for an actor follows from the policy's own ability table
 * (src/common/policy/policy.ts, checked against ../shared/docs/gitlab-compat.md §3.5) plus the per-object rules of
 * §3.5 (confidential issues; private and internal snippets). A route the table does not classify
 * fails the matrix.
 *
 * Outcomes: 'ok' (2xx/304, or a status listed in `input`, which is about the request's input, not
 * access); a number (401 unauthenticated, 403 visible but not allowed, 404 invisible).
 */

export type Json = Record<string, any>;
export type Outcome = 'ok' | number;

export interface Ctx {
  fx: Fixtures;
  p: ProjectFixture;
  actor: Actor;
  /** Unique per case: names of things created. */
  n: string;
  variant: string;
}

interface Common {
  /** Writes whose success would change the fixtures other cases rely on: only refusals are asserted. */
  destructive?: string;
  body?: (c: Ctx) => Json;
  query?: (c: Ctx) => Json;
  /** Statuses that, for an allowed caller, are about the input (e.g. 409 for a second create of one name). */
  input?: number[];
  /** Path parameter values (default: from the fixtures). */
  params?: (c: Ctx) => Record<string, string | number>;
  /** Answered without a user (the route's credential is something else, or nothing). */
  anonymousAllowed?: boolean;
  /** Status for a caller who may not see the object the path names (default 404; 200 where a missing one answers 200). */
  objectInvisible?: number;
  /** Status for a caller who sees the project but lacks the ability (default 403). */
  denied?: number;
  /** Callers refused whatever their abilities (e.g. external users cannot own projects, so cannot fork). */
  refuse?: (a: Actor) => Outcome | undefined;
}

export interface ProjectRule extends Common {
  scope: 'project';
  ability: ProjectAbility;
  /** Abilities on the object the route goes through (e.g. read_issue for issue notes); missing → `preStatus`. */
  pre?: readonly ProjectAbility[];
  preStatus?: number;
  /** Which object the path names (for the per-object visibility rules and variants). */
  object?: 'issue' | 'snippet' | 'build' | 'pipeline' | 'mr';
}

export interface GlobalRule extends Common {
  scope: 'global';
  /** Expected outcome for a signed-in, unblocked actor. Anonymous and blocked get 401 unless anonymousAllowed. */
  expect: (a: Actor, fx: Fixtures) => Outcome;
}

export interface SkipRule {
  scope: 'skip';
  reason: string;
}

export type Rule = ProjectRule | GlobalRule | SkipRule;

const any = (): Outcome => 'ok';
const adminOnly = (a: Actor): Outcome => (a.admin ? 'ok' : 403);
const memberOfGroup = (a: Actor): boolean => a.admin || a.name === 'owner' || a.name === 'developer';
const newKey = () => sshKey();
const P = (ability: ProjectAbility, extra: Partial<ProjectRule> = {}): ProjectRule => ({ scope: 'project', ability, ...extra });
const G = (expect: GlobalRule['expect'], extra: Partial<GlobalRule> = {}): GlobalRule => ({ scope: 'global', expect, ...extra });

const ISSUE = { object: 'issue', pre: ['read_issue'] } as const;
const MR = { object: 'mr', pre: ['read_merge_request'] } as const;
const SNIPPET = { object: 'snippet', pre: ['read_project_snippet'] } as const;
const BUILD = { object: 'build', pre: ['read_build'] } as const;
const PIPELINE = { object: 'pipeline', pre: ['read_pipeline'] } as const;

const file = (c: Ctx, path = `f-${c.n}.txt`) => ({ file_path: path, branch_name: 'feature', content: `x ${c.n}\n`, commit_message: `m ${c.n}` });

/** Notes of the three noteables: same rules, the noteable's read ability first (404 when it is unreadable, §3.5 notes). */
function notes(prefix: string, o: typeof ISSUE | typeof MR | typeof SNIPPET): Record<string, Rule> {
  const pre: Partial<ProjectRule> = { ...o };
  return {
    [`GET ${prefix}/notes`]: P('read_note', pre),
    [`POST ${prefix}/notes`]: P('create_note', { ...pre, body: (c) => ({ body: `new note ${c.n}` }) }),
    [`GET ${prefix}/notes/{note_id}`]: P('read_note', pre),
    [`PUT ${prefix}/notes/{note_id}`]: P('admin_note', { ...pre, body: (c) => ({ body: `edited note ${c.n}` }) }),
    [`DELETE ${prefix}/notes/{note_id}`]: P('admin_note', { ...pre, destructive: 'deletes the fixture note' }),
  };
}

const PR = '/projects/{id}';

function mergeRequests(base: string): Record<string, Rule> {
  const m = `${PR}/${base}/{merge_request_id}`;
  return {
    [`GET ${m}`]: P('read_merge_request', MR),
    [`PUT ${m}`]: P('update_merge_request', { ...MR, body: (c) => ({ description: `d ${c.n}` }) }),
    [`DELETE ${m}`]: P('destroy_merge_request', { ...MR, destructive: 'deletes the fixture merge request' }),
    // merging needs push access to the target branch, else 401 (../shared/docs/gitlab-compat.md §3.5, ../shared/docs/spec-decisions.md #6)
    [`PUT ${m}/merge`]: P('update_merge_request', { ...MR, destructive: 'merges the fixture merge request', denied: 401 }),
    [`POST ${m}/cancel_merge_when_build_succeeds`]: P('update_merge_request', { ...MR, input: [405, 406], denied: 401 }),
    [`PUT ${m}/cancel_merge_when_build_succeeds`]: P('update_merge_request', { ...MR, input: [405, 406], denied: 401 }),
    // diffs and commits are code: download_code too (a guest of a private project reads the merge request, not its code)
    [`GET ${m}/changes`]: P('download_code', MR),
    [`GET ${m}/closes_issues`]: P('read_merge_request', MR),
    [`GET ${m}/commits`]: P('download_code', MR),
    [`GET ${m}/comments`]: P('read_note', MR),
    [`POST ${m}/comments`]: P('create_note', { ...MR, body: (c) => ({ note: `comment ${c.n}` }) }),
    [`POST ${m}/subscription`]: P('read_merge_request', MR),
    [`DELETE ${m}/subscription`]: P('read_merge_request', MR),
    ...notes(m, MR),
  };
}

export const RULES: Record<string, Rule> = {
  // ---- instance-wide
  'GET /application/settings': G(adminOnly),
  'PUT /application/settings': G(adminOnly, { body: () => ({ home_page_url: null }) }),
  'POST /application/settings/reset_runners_registration_token': G(adminOnly, { destructive: 'resets the runners registration token' }),
  'GET /version': G(any),
  'GET /openapi.json': G(any, { anonymousAllowed: true }),
  'GET /licenses': G(any, { anonymousAllowed: true }),
  'GET /licenses/{key}': G(any, { anonymousAllowed: true, params: () => ({ key: 'mit' }) }),
  'POST /session': { scope: 'skip', reason: 'sign-in with credentials, not a token: session-auth.e2e-spec.ts' },
  'POST /oauth/token': { scope: 'skip', reason: 'credential exchange, not a token: oauth.e2e-spec.ts' },
  'POST /oauth/revoke': { scope: 'skip', reason: 'credential exchange, not a token: oauth.e2e-spec.ts' },
  'GET /issues': G(any),
  // checking a .gitlab-ci.yml: any signed-in user (no project involved)
  'POST /ci/lint': G(any, { body: () => ({ content: 'job:\n  script: make\n' }) }),
  'GET /namespaces': G(any),
  'GET /keys/{id}': G(adminOnly, { params: (c) => ({ id: c.fx.developerKeyId }) }),
  // system hooks
  'GET /deploy_keys': G(adminOnly),
  'GET /hooks': G(adminOnly),
  'POST /hooks': G(adminOnly, { body: (c) => ({ url: `http://93.184.216.34/new-${c.n}` }) }),
  'GET /hooks/{id}': G(adminOnly, { params: (c) => ({ id: c.fx.systemHookId }), destructive: 'sends the test payload to the hook URL' }),
  'GET /hooks/{id}/events': G(adminOnly, { params: (c) => ({ id: c.fx.systemHookId }) }),
  'DELETE /hooks/{id}': G(adminOnly, { params: (c) => ({ id: c.fx.systemHookId }), destructive: 'deletes the fixture system hook' }),
  // groups (a private group: the owner and the developer are members)
  'GET /groups': G(any),
  'POST /groups': G((a) => (a.external ? 403 : 'ok'), { body: (c) => ({ name: `g-${c.n}`, path: `g-${c.n}` }) }),
  'GET /groups/{id}': G((a) => (memberOfGroup(a) ? 'ok' : 404)),
  'DELETE /groups/{id}': G((a) => (a.admin || a.name === 'owner' ? 'ok' : memberOfGroup(a) ? 403 : 404), { destructive: 'deletes the fixture group' }),
  'GET /groups/{id}/projects': G((a) => (memberOfGroup(a) ? 'ok' : 404)),
  'GET /groups/{id}/notification_settings': G((a) => (memberOfGroup(a) ? 'ok' : 404)),
  'PUT /groups/{id}/notification_settings': G((a) => (memberOfGroup(a) ? 'ok' : 404), { body: () => ({ level: 'watch' }) }),
  'POST /groups/{id}/projects/{project_id}': G(adminOnly, {
    destructive: 'moves a project into the group',
    params: (c) => ({ project_id: c.fx.projects.public.id }),
  }),
  'GET /groups/{id}/members': G((a) => (memberOfGroup(a) ? 'ok' : 404)),
  'POST /groups/{id}/members': G((a) => (a.admin || a.name === 'owner' ? 'ok' : memberOfGroup(a) ? 403 : 404), {
    body: (c) => ({ user_id: c.fx.spare.id, access_level: 10 }),
    input: [409],
  }),
  'GET /groups/{id}/members/{user_id}': G((a) => (memberOfGroup(a) ? 'ok' : 404)),
  'PUT /groups/{id}/members/{user_id}': G((a) => (a.admin || a.name === 'owner' ? 'ok' : memberOfGroup(a) ? 403 : 404), {
    body: () => ({ access_level: 30 }),
  }),
  'DELETE /groups/{id}/members/{user_id}': G((a) => (a.admin || a.name === 'owner' ? 'ok' : memberOfGroup(a) ? 403 : 404), {
    destructive: 'removes the developer from the group',
  }),
  // projects, instance level
  'GET /projects': G(any),
  'POST /projects': G((a) => (a.external ? 403 : 'ok'), { body: (c) => ({ name: `new-${c.n}` }) }),
  'GET /projects/all': G(adminOnly),
  'GET /projects/owned': G(any),
  'GET /projects/starred': G(any),
  'GET /projects/search/{query}': G(any, { params: () => ({ query: 'matrix' }) }),
  'POST /projects/user/{user_id}': G(adminOnly, { params: (c) => ({ user_id: c.fx.spare.id }), body: (c) => ({ name: `foruser-${c.n}` }) }),
  // runners (the private project's specific runner)
  'GET /runners': G(any),
  'GET /runners/all': G(adminOnly),
  'GET /runners/{id}': G((a) => (a.admin || a.name === 'owner' || a.name === 'master' ? 'ok' : 403), { params: (c) => ({ id: c.fx.runner.id }) }),
  'PUT /runners/{id}': G((a) => (a.admin || a.name === 'owner' || a.name === 'master' ? 'ok' : 403), {
    params: (c) => ({ id: c.fx.runner.id }),
    body: () => ({ active: true }),
  }),
  'DELETE /runners/{id}': G((a) => (a.admin || a.name === 'owner' || a.name === 'master' ? 'ok' : 403), {
    params: (c) => ({ id: c.fx.runner.id }),
    destructive: 'deletes the fixture runner',
  }),
  // the current user; another user's keys and emails (the developer's)
  'GET /user': G(any),
  'GET /user/keys': G(any),
  'POST /user/keys': G(any, { body: (c) => ({ title: `k ${c.n}`, key: newKey() }) }),
  'GET /user/keys/{id}': G((a) => (a.name === 'developer' ? 'ok' : 404), { params: (c) => ({ id: c.fx.developerKeyId }) }),
  // deleting one's own key or email is idempotent: someone else's answers like a missing one (200, empty), deleting nothing
  'DELETE /user/keys/{id}': G((a) => (a.name === 'developer' ? 'ok' : 200), {
    params: (c) => ({ id: c.fx.developerKeyId }),
    destructive: "deletes the developer's key",
  }),
  'GET /user/emails': G(any),
  'GET /notification_settings': G(any),
  'PUT /notification_settings': G(any, { body: () => ({ level: 'participating' }) }),
  'POST /user/emails': G(any, { body: (c) => ({ email: `e-${c.n}@matrix.test` }) }),
  'GET /user/emails/{id}': G((a) => (a.name === 'developer' ? 'ok' : 404), { params: (c) => ({ id: c.fx.developerEmailId }) }),
  'DELETE /user/emails/{id}': G((a) => (a.name === 'developer' ? 'ok' : 200), {
    params: (c) => ({ id: c.fx.developerEmailId }),
    destructive: "deletes the developer's email",
  }),
  'GET /users': G(any),
  'POST /users': G(adminOnly, { body: (c) => ({ username: `u-${c.n}`, email: `u-${c.n}@matrix.test`, name: `U ${c.n}`, password: `password-${c.n}` }) }),
  'GET /users/{id}': G(any, { params: (c) => ({ id: c.fx.actors.developer.user!.id }) }),
  'PUT /users/{id}': G(adminOnly, { params: (c) => ({ id: c.fx.spare.id }), body: (c) => ({ bio: `bio ${c.n}` }) }),
  'DELETE /users/{id}': G(adminOnly, { params: (c) => ({ id: c.fx.spare.id }), destructive: 'deletes a user' }),
  'PUT /users/{uid}/block': G(adminOnly, { params: (c) => ({ uid: c.fx.spare.id }), destructive: 'blocks a user' }),
  'PUT /users/{uid}/unblock': G(adminOnly, { params: (c) => ({ uid: c.fx.spare.id }) }),
  'GET /users/{uid}/keys': G(adminOnly, { params: (c) => ({ uid: c.fx.actors.developer.user!.id }) }),
  'POST /users/{uid}/keys': G(adminOnly, { params: (c) => ({ uid: c.fx.spare.id }), body: (c) => ({ title: `k ${c.n}`, key: newKey() }) }),
  'DELETE /users/{uid}/keys/{id}': G(adminOnly, {
    params: (c) => ({ uid: c.fx.actors.developer.user!.id, id: c.fx.developerKeyId }),
    destructive: "deletes the developer's key",
  }),
  'GET /users/{uid}/emails': G(adminOnly, { params: (c) => ({ uid: c.fx.actors.developer.user!.id }) }),
  'POST /users/{uid}/emails': G(adminOnly, { params: (c) => ({ uid: c.fx.spare.id }), body: (c) => ({ email: `a-${c.n}@matrix.test` }) }),
  'DELETE /users/{uid}/emails/{id}': G(adminOnly, {
    params: (c) => ({ uid: c.fx.actors.developer.user!.id, id: c.fx.developerEmailId }),
    destructive: "deletes the developer's email",
  }),

  // ---- the runner API: its own tokens only; a user's private token is no credential there
  'POST /ci/api/v1/builds/register': G(() => 403, { anonymousAllowed: true, body: () => ({ token: 'not-a-runner-token' }) }),
  'PUT /ci/api/v1/builds/{id}': G(() => 403, { anonymousAllowed: true, body: () => ({ token: 'not-a-runner-token', state: 'failed' }) }),
  'PATCH /ci/api/v1/builds/{id}/trace.txt': G(() => 403, { anonymousAllowed: true, query: () => ({ token: 'not-a-build-token' }) }), // a wrong build token (none at all is 400, a missing attribute)
  'GET /ci/api/v1/builds/{id}/artifacts': G(() => 403, { anonymousAllowed: true, query: () => ({ token: 'not-a-build-token' }) }), // a wrong build token (none at all is 400, a missing attribute)
  'POST /ci/api/v1/builds/{id}/artifacts': G(() => 403, { anonymousAllowed: true, query: () => ({ token: 'not-a-build-token' }) }), // a wrong build token (none at all is 400, a missing attribute)
  'DELETE /ci/api/v1/builds/{id}/artifacts': G(() => 403, { anonymousAllowed: true, query: () => ({ token: 'not-a-build-token' }) }), // a wrong build token (none at all is 400, a missing attribute)
  'POST /ci/api/v1/runners/register': G(() => 403, { anonymousAllowed: true, body: () => ({ token: 'not-a-registration-token' }) }),
  'DELETE /ci/api/v1/runners/delete': G(() => 403, { anonymousAllowed: true, body: () => ({ token: 'not-a-runner-token' }) }),

  // ---- one project
  [`GET ${PR}`]: P('read_project'),
  [`PUT ${PR}`]: P('admin_project', { body: (c) => ({ description: `desc ${c.n}` }) }),
  [`DELETE ${PR}`]: P('remove_project', { destructive: 'deletes the fixture project' }),
  [`POST ${PR}/archive`]: P('archive_project', { destructive: 'archiving changes every ability' }),
  [`POST ${PR}/unarchive`]: P('archive_project', {}),
  // external users cannot own projects (projects limit 0): 403 with the limit message
  'POST /projects/fork/{id}': P('fork_project', { input: [409], refuse: (a) => (a.external ? 403 : undefined) }),
  [`POST ${PR}/star`]: P('read_project'),
  [`DELETE ${PR}/star`]: P('read_project'),
  [`GET ${PR}/events`]: P('read_project'),
  // members (user_id: the guest; new members: the spare user)
  [`GET ${PR}/members`]: P('read_project_member'),
  [`POST ${PR}/members`]: P('admin_project_member', { body: (c) => ({ user_id: c.fx.spare.id, access_level: 10 }) }), // a second add answers 201 (8.17)
  [`GET ${PR}/members/{user_id}`]: P('read_project_member'),
  [`PUT ${PR}/members/{user_id}`]: P('admin_project_member', { body: () => ({ access_level: 10 }) }),
  [`DELETE ${PR}/members/{user_id}`]: P('admin_project_member', { destructive: 'removes the guest from the project' }),
  // hooks, runners, triggers, variables
  [`GET ${PR}/hooks`]: P('admin_project'),
  [`POST ${PR}/hooks`]: P('admin_project', { body: (c) => ({ url: `http://93.184.216.34/p-${c.n}` }) }),
  [`GET ${PR}/hooks/{hook_id}`]: P('admin_project'),
  [`PUT ${PR}/hooks/{hook_id}`]: P('admin_project', { body: (c) => ({ url: `http://93.184.216.34/${c.p.markers.master[3]}` }) }),
  [`DELETE ${PR}/hooks/{hook_id}`]: P('admin_project', { destructive: 'deletes the fixture hook' }),
  [`GET ${PR}/hooks/{hook_id}/events`]: P('admin_project'),
  // deploy keys (issue 39): masters of the project; v3 serves each route under deploy_keys and keys
  ...Object.fromEntries(
    ['deploy_keys', 'keys'].flatMap((path): [string, Rule][] => {
      const dk = `${PR}/${path}`;
      const fixtureKey = { params: (c: Ctx) => ({ key_id: c.p.deployKeyId }) };
      return [
        [`GET ${dk}`, P('admin_project')],
        [`POST ${dk}`, P('admin_project', { body: (c) => ({ title: `dk ${c.n}`, key: newKey() }) })],
        [`GET ${dk}/{key_id}`, P('admin_project', fixtureKey)],
        [`DELETE ${dk}/{key_id}`, P('admin_project', { ...fixtureKey, destructive: 'disables the fixture deploy key' })],
        // enabling the project's own key again changes nothing
        [`POST ${dk}/{key_id}/enable`, P('admin_project', fixtureKey)],
        [`DELETE ${dk}/{key_id}/disable`, P('admin_project', { ...fixtureKey, destructive: 'disables the fixture deploy key' })],
        [`POST ${dk}/{key_id}/disable`, P('admin_project', { ...fixtureKey, destructive: 'disables the fixture deploy key' })],
      ];
    }),
  ),
  [`GET ${PR}/runners`]: P('admin_project'),
  [`POST ${PR}/runners`]: P('admin_project', { destructive: 'enables the private project runner elsewhere', body: (c) => ({ runner_id: c.fx.runner.id }) }),
  [`DELETE ${PR}/runners/{runner_id}`]: P('admin_project', { destructive: 'disables the fixture runner' }),
  [`GET ${PR}/triggers`]: P('admin_build'),
  [`POST ${PR}/triggers`]: P('admin_build'),
  [`GET ${PR}/triggers/{token}`]: P('admin_build'),
  [`DELETE ${PR}/triggers/{token}`]: P('admin_build', { destructive: 'deletes the fixture trigger' }),
  [`POST ${PR}/trigger/builds`]: G(() => 401, {
    anonymousAllowed: true,
    // another project's trigger token is never a way in (401, ../shared/docs/gitlab-compat.md §1.8); the right token is the credential, whoever calls
    body: (c) => ({ token: (c.p.name === 'private' ? c.fx.projects.public : c.fx.projects.private).triggerToken, ref: 'master' }),
  }),
  // the same with the ref in the path (8.x's other trigger path, issue 38)
  [`POST ${PR}/ref/{ref}/trigger/builds`]: G(() => 401, {
    anonymousAllowed: true,
    params: () => ({ ref: 'master' }),
    body: (c) => ({ token: (c.p.name === 'private' ? c.fx.projects.public : c.fx.projects.private).triggerToken }),
  }),
  [`GET ${PR}/variables`]: P('admin_build'),
  [`POST ${PR}/variables`]: P('admin_build', { body: (c) => ({ key: `K_${c.n.replace(/-/g, '_')}`, value: 'v' }) }),
  [`GET ${PR}/variables/{key}`]: P('admin_build'),
  [`PUT ${PR}/variables/{key}`]: P('admin_build', { body: (c) => ({ value: c.p.markers.master[2] }) }),
  [`DELETE ${PR}/variables/{key}`]: P('admin_build', { destructive: 'deletes the fixture variable' }),
  // issues
  [`GET ${PR}/issues`]: P('read_issue'),
  [`POST ${PR}/issues`]: P('create_issue', { body: (c) => ({ title: `new issue ${c.n}` }) }),
  [`GET ${PR}/issues/{issue_id}`]: P('read_issue', ISSUE),
  [`PUT ${PR}/issues/{issue_id}`]: P('update_issue', { ...ISSUE, body: (c) => ({ description: `d ${c.n}` }) }),
  [`DELETE ${PR}/issues/{issue_id}`]: P('destroy_issue', { ...ISSUE, destructive: 'deletes the fixture issue' }),
  // moving needs admin_issue on both projects; refused → 400 "Cannot move issue due to insufficient permissions!" (spec)
  [`POST ${PR}/issues/{issue_id}/move`]: P('admin_issue', {
    ...ISSUE,
    denied: 400,
    destructive: 'moves the fixture issue away',
    body: (c) => ({ to_project_id: c.fx.projects.public.id }),
  }),
  [`POST ${PR}/issues/{issue_id}/subscription`]: P('read_issue', ISSUE),
  [`DELETE ${PR}/issues/{issue_id}/subscription`]: P('read_issue', ISSUE),
  ...notes(`${PR}/issues/{issue_id}`, ISSUE),
  // labels and milestones
  [`GET ${PR}/labels`]: P('read_label'),
  [`POST ${PR}/labels`]: P('admin_label', { body: (c) => ({ name: `l-${c.n}`, color: '#00ff00' }) }),
  [`PUT ${PR}/labels`]: P('admin_label', { body: (c) => ({ name: c.p.labelName, description: `d ${c.n}` }) }),
  [`DELETE ${PR}/labels`]: P('destroy_label', { destructive: 'deletes the fixture label', query: (c) => ({ name: c.p.labelName }) }),
  [`GET ${PR}/notification_settings`]: P('read_project'),
  [`PUT ${PR}/notification_settings`]: P('read_project', { body: () => ({ level: 'watch' }) }),
  [`POST ${PR}/labels/{label_id}/subscription`]: P('read_label'),
  [`DELETE ${PR}/labels/{label_id}/subscription`]: P('read_label'),
  [`GET ${PR}/milestones`]: P('read_milestone'),
  [`POST ${PR}/milestones`]: P('admin_milestone', { body: (c) => ({ title: `ms-${c.n}` }) }),
  [`GET ${PR}/milestones/{milestone_id}`]: P('read_milestone'),
  [`PUT ${PR}/milestones/{milestone_id}`]: P('admin_milestone', { body: (c) => ({ description: `d ${c.n}` }) }),
  [`GET ${PR}/milestones/{milestone_id}/issues`]: P('read_milestone'),
  // merge requests (and the legacy singular paths)
  [`GET ${PR}/merge_requests`]: P('read_merge_request'),
  [`POST ${PR}/merge_requests`]: P('create_merge_request', {
    body: (c) => ({ source_branch: 'feature', target_branch: 'master', title: `mr ${c.n}` }),
    input: [409],
  }),
  ...mergeRequests('merge_requests'),
  ...mergeRequests('merge_request'),
  // snippets
  [`GET ${PR}/snippets`]: P('read_project_snippet'),
  [`POST ${PR}/snippets`]: P('create_project_snippet', { body: (c) => ({ title: `s ${c.n}`, file_name: 'a.rb', code: 'x', visibility_level: 0 }) }),
  [`GET ${PR}/snippets/{snippet_id}`]: P('read_project_snippet', SNIPPET),
  [`PUT ${PR}/snippets/{snippet_id}`]: P('update_project_snippet', { ...SNIPPET, body: (c) => ({ file_name: `s-${c.variant}.rb` }) }),
  // deleting a missing snippet answers 200 (../shared/docs/spec-decisions.md #10): an invisible one answers the same, deleting nothing
  [`DELETE ${PR}/snippets/{snippet_id}`]: P('update_project_snippet', { ...SNIPPET, destructive: 'deletes the fixture snippet', objectInvisible: 200 }),
  [`GET ${PR}/snippets/{snippet_id}/raw`]: P('read_project_snippet', SNIPPET),
  ...notes(`${PR}/snippets/{snippet_id}`, SNIPPET),
  // repository
  [`GET ${PR}/repository/tree`]: P('download_code'),
  [`GET ${PR}/repository/blobs/{sha}`]: P('download_code', { query: () => ({ filepath: 'README.md' }) }),
  [`GET ${PR}/repository/commits/{sha}/blob`]: P('download_code', { query: () => ({ filepath: 'README.md' }) }),
  [`GET ${PR}/repository/raw_blobs/{sha}`]: P('download_code', { params: (c) => ({ sha: c.p.blobSha }) }),
  [`GET ${PR}/repository/archive`]: P('download_code'),
  [`GET ${PR}/repository/archive.{format}`]: P('download_code', { params: () => ({ format: 'zip' }) }),
  [`GET ${PR}/repository/compare`]: P('download_code', { query: () => ({ from: 'master', to: 'feature' }) }),
  [`GET ${PR}/repository/contributors`]: P('download_code'),
  [`GET ${PR}/repository/commits`]: P('download_code'),
  [`GET ${PR}/repository/commits/{sha}`]: P('download_code'),
  [`GET ${PR}/repository/commits/{sha}/diff`]: P('download_code'),
  [`GET ${PR}/repository/commits/{sha}/comments`]: P('download_code'),
  [`POST ${PR}/repository/commits/{sha}/comments`]: P('create_note', { pre: ['download_code'], body: (c) => ({ note: `cc ${c.n}` }) }),
  [`GET ${PR}/repository/commits/{sha}/statuses`]: P('read_commit_status'),
  [`POST ${PR}/statuses/{sha}`]: P('create_commit_status', { body: (c) => ({ state: 'success', name: `st-${c.n}` }) }),
  [`GET ${PR}/repository/commits/{sha}/builds`]: P('read_build'), // [] when the commit has no pipeline (8.17)
  [`GET ${PR}/repository/branches`]: P('download_code'),
  [`POST ${PR}/repository/branches`]: P('push_code', { body: (c) => ({ branch_name: `b-${c.n}`, ref: 'master' }) }),
  [`GET ${PR}/repository/branches/{branch}`]: P('download_code'),
  [`DELETE ${PR}/repository/branches/{branch}`]: P('push_code', { destructive: 'deletes the fixture branch' }),
  [`PUT ${PR}/repository/branches/{branch}/protect`]: P('admin_project', { params: () => ({ branch: 'guarded' }) }),
  [`PUT ${PR}/repository/branches/{branch}/unprotect`]: P('admin_project', { params: () => ({ branch: 'guarded' }) }),
  [`GET ${PR}/repository/tags`]: P('download_code'),
  [`POST ${PR}/repository/tags`]: P('push_code', { body: (c) => ({ tag_name: `t-${c.n}`, ref: 'master' }) }),
  [`GET ${PR}/repository/tags/{tag_name}`]: P('download_code'),
  // moving or deleting an existing tag is master+ (GitLab 8.17's pre-receive tag_checks, which its API's deletion runs too)
  [`DELETE ${PR}/repository/tags/{tag_name}`]: P('admin_project', { destructive: 'deletes the fixture tag' }),
  [`POST ${PR}/repository/tags/{tag_name}/release`]: P('push_code', { body: (c) => ({ description: `rel ${c.n}` }), input: [409] }),
  [`PUT ${PR}/repository/tags/{tag_name}/release`]: P('push_code', { body: (c) => ({ description: `rel ${c.n}` }) }),
  [`GET ${PR}/repository/files`]: P('download_code', { query: () => ({ file_path: 'README.md', ref: 'master' }) }),
  [`POST ${PR}/repository/files`]: P('push_code', { body: (c) => file(c), input: [400] }),
  // concurrent commits to one branch: the loser gets 400 "branch was updated in the meantime"
  [`PUT ${PR}/repository/files`]: P('push_code', { body: (c) => file(c, 'feature.txt'), input: [400] }),
  [`DELETE ${PR}/repository/files`]: P('push_code', { destructive: 'deletes a file of the fixture branch', query: (c) => file(c, 'feature.txt') }),
  // builds (the private project's build; elsewhere the id is another project's: 404 for allowed callers)
  [`GET ${PR}/builds`]: P('read_build'),
  [`GET ${PR}/builds/{build_id}`]: P('read_build', BUILD),
  [`GET ${PR}/builds/{build_id}/trace`]: P('read_build', BUILD),
  [`GET ${PR}/builds/{build_id}/artifacts`]: P('read_build', BUILD),
  [`POST ${PR}/builds/{build_id}/cancel`]: P('update_build', BUILD),
  [`POST ${PR}/builds/{build_id}/retry`]: P('update_build', BUILD),
  // playing a manual action (GitLab 8.17; update_build here, security first): the fixture build is none, so an
  // allowed caller's 400 Unplayable Job is about the input; success is ci-manual-actions.e2e-spec.ts's
  [`POST ${PR}/builds/{build_id}/play`]: P('update_build', { ...BUILD, input: [400] }),
  [`POST ${PR}/builds/{build_id}/erase`]: P('update_build', { ...BUILD, destructive: 'erases the fixture build trace and artifacts' }),
  // keeping artifacts clears an expiry the fixture build does not have (issue 38)
  [`POST ${PR}/builds/{build_id}/artifacts/keep`]: P('update_build', BUILD),
  // a ref's artifacts (issue 38): the fixture pipelines never succeed (the private one's test job never runs), so an
  // allowed caller's 404 (no successful pipeline) is about the input; success is ci-artifacts-badges.e2e-spec.ts's
  [`GET ${PR}/builds/artifacts/{ref_name}/download`]: P('read_build', {
    params: () => ({ ref_name: 'master' }),
    query: () => ({ job: 'build' }),
    input: [404],
  }),
  // pipelines (the private project's pipeline; elsewhere the id is another project's: 404 for allowed callers). Only
  // the private project has a .gitlab-ci.yml: creating one elsewhere is 400 "Missing .gitlab-ci.yml file" (input)
  [`GET ${PR}/pipelines`]: P('read_pipeline'),
  [`GET ${PR}/pipelines/{pipeline_id}`]: P('read_pipeline', PIPELINE),
  [`POST ${PR}/pipeline`]: P('create_pipeline', { body: () => ({ ref: 'master' }), input: [400] }),
  [`POST ${PR}/pipelines/{pipeline_id}/retry`]: P('update_pipeline', PIPELINE),
  [`POST ${PR}/pipelines/{pipeline_id}/cancel`]: P('update_pipeline', PIPELINE),
  // environments and deployments (issue 38, GitLab 8.17's abilities). The fixtures have none: an id that names none is
  // 404 Not found for an allowed caller (input); their success is ci-environments.e2e-spec.ts's
  [`GET ${PR}/environments`]: P('read_environment'),
  [`POST ${PR}/environments`]: P('create_environment', { body: (c) => ({ name: `env-${c.n}` }) }),
  [`PUT ${PR}/environments/{environment_id}`]: P('update_environment', {
    params: () => ({ environment_id: 2000000000 }),
    body: () => ({ name: 'x' }),
    input: [404],
  }),
  [`DELETE ${PR}/environments/{environment_id}`]: P('update_environment', { params: () => ({ environment_id: 2000000000 }), input: [404] }),
  [`GET ${PR}/deployments`]: P('read_deployment'),
  [`GET ${PR}/deployments/{deployment_id}`]: P('read_deployment', { params: () => ({ deployment_id: 2000000000 }), input: [404] }),
};

/** `GET /api/v3/projects/{id}` → `GET /projects/{id}` (the runner API and OAuth keep their prefix). */
export function ruleKey(method: string, docPath: string): string {
  return `${method.toUpperCase()} ${docPath.replace(/^\/api\/v3(?=\/)/, '')}`;
}

// ---------------------------------------------------------------------------------------------
// Expected outcomes

/** The blocked user's token authenticates nobody: it acts as anonymous. */
export function policyUser(a: Actor): PolicyUser | undefined {
  if (!a.user || a.name === 'anonymous' || a.name === 'blocked') return undefined;
  return { id: a.user.id, admin: a.admin, external: a.external };
}

export function accessOf(a: Actor): ProjectAccess {
  const level = MEMBER_LEVEL[a.name] ?? 0;
  if (!level || !policyUser(a)) return NO_ACCESS;
  return {
    level,
    projectMember: a.name === 'owner' ? null : { accessLevel: level, notificationLevel: 3 },
    groupMember: null,
    namespaceOwner: a.name === 'owner',
  };
}

export function policyProject(p: ProjectFixture): PolicyProject {
  return {
    visibilityLevel: p.visibility,
    archived: false,
    issuesEnabled: p.features.issues,
    mergeRequestsEnabled: p.features.mergeRequests,
    wikiEnabled: true,
    snippetsEnabled: p.features.snippets,
    buildsEnabled: p.features.builds,
    containerRegistryEnabled: true,
    publicBuilds: p.publicBuilds,
  };
}

export function abilitiesOf(a: Actor, p: ProjectFixture): Set<ProjectAbility> {
  return projectAbilities(policyUser(a), policyProject(p), accessOf(a));
}

const isMember = (a: Actor) => !!policyUser(a) && (a.admin || (MEMBER_LEVEL[a.name] ?? 0) >= AccessLevel.GUEST);
/** Sees every confidential issue (8.12–8.17, ../shared/docs/spec-decisions.md #37): reporters and above, administrators; not guests. */
const seesConfidential = (a: Actor) => !!policyUser(a) && (a.admin || (MEMBER_LEVEL[a.name] ?? 0) >= AccessLevel.REPORTER);

/** Variants of a project route: which object of the project the path names. */
export function variantsOf(rule: ProjectRule): string[] {
  if (rule.object === 'issue') return ['issue', 'confidential'];
  if (rule.object === 'snippet') return ['private', 'internal', 'public'];
  return ['-'];
}

/** Whether the object the variant names is visible to the actor (§3.5 per-object rules). */
function objectVisible(a: Actor, variant: string): boolean {
  if (variant === 'confidential') return seesConfidential(a);
  if (variant === 'private') return isMember(a);
  if (variant === 'internal') return isMember(a) || !a.external;
  return true;
}

export function expectProject(rule: ProjectRule, a: Actor, p: ProjectFixture, variant: string): Outcome {
  const user = policyUser(a);
  if (!user && !rule.anonymousAllowed) return 401;
  const abilities = abilitiesOf(a, p);
  if (!abilities.has('read_project')) return 404;
  const refused = rule.refuse?.(a);
  if (refused !== undefined) return refused;
  for (const pre of rule.pre ?? []) if (!abilities.has(pre)) return rule.preStatus ?? 403;
  if (!objectVisible(a, variant)) return rule.objectInvisible ?? 404;
  if (!abilities.has(rule.ability)) return rule.denied ?? 403;
  // the build or pipeline id of another project
  if ((rule.object === 'build' || rule.object === 'pipeline') && p.name !== 'private') return 404;
  return 'ok';
}

export function expectGlobal(rule: GlobalRule, a: Actor, fx: Fixtures): Outcome {
  if (!policyUser(a) && !rule.anonymousAllowed) return 401;
  return rule.expect(a, fx);
}

/**
 * Markers an actor must never see in any body: everything of a project it cannot read, confidential
 * issues and private/internal snippets it may not read, master-only secrets (runners token, trigger
 * tokens, variable values, hook URLs), build traces and artifacts without read_build, other users'
 * private tokens, the developer's keys and secondary emails, the private group.
 */
export function forbiddenMarkers(a: Actor, fx: Fixtures): string[] {
  const out: string[] = [];
  for (const p of Object.values(fx.projects)) {
    const ab = abilitiesOf(a, p);
    const member = isMember(a);
    if (!ab.has('read_project')) {
      out.push(...p.markers.project, ...p.markers.confidential, ...p.markers.master, ...p.markers.build);
      out.push(...p.markers.snippet.private, ...p.markers.snippet.internal, ...p.markers.snippet.public);
      continue;
    }
    if (!seesConfidential(a)) out.push(...p.markers.confidential);
    if (!member) out.push(...p.markers.snippet.private);
    if (!member && a.external) out.push(...p.markers.snippet.internal);
    // runners token, trigger tokens, variable values, hook URLs: masters, owners and admins (../shared/docs/spec-decisions.md, security overrides)
    if (!a.admin && (MEMBER_LEVEL[a.name] ?? 0) < AccessLevel.MASTER) out.push(...p.markers.master);
    if (!ab.has('read_build')) out.push(...p.markers.build);
  }
  for (const [name, token] of Object.entries(fx.tokens)) if (name !== a.name && token) out.push(token);
  if (!a.admin && a.name !== 'developer') out.push(...fx.developerMarkers);
  if (!memberOfGroup(a)) out.push(...fx.group.markers);
  return out;
}

export const VISIBILITY_NAMES: Record<number, string> = { [Visibility.PRIVATE]: 'private', [Visibility.INTERNAL]: 'internal', [Visibility.PUBLIC]: 'public' };
