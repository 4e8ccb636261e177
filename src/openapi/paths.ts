/**
 * From the app's route paths to GitLab's: which routes the document shows, which app routes stand for
 * several GitLab paths (catch-all routes), and the GitLab names of path parameters.
 *
 * Paths here are OpenAPI templates without the `/api/v3` prefix (`/projects/{id}/issues`); the runner
 * API keeps its own `/ci/api/v1` prefix.
 */

/** The API's own prefix, shown in `servers` rather than in every path. */
export const API_PREFIX = '/api/v3';

/** Routes the document shows: the v3 API, the runner API and the OAuth token endpoints (not git smart HTTP, not probes). */
export const INCLUDED_PREFIXES = ['/api/v3/', '/ci/api/v1/', '/oauth/'];

/**
 * App routes that serve several GitLab paths (Express 5 takes no inline regex, so these handlers take
 * the rest of the path and dispatch on it). Keyed by `METHOD path` as Nest declares the route (with
 * the app's parameter names); each target is written with the app's names too, then renamed like any
 * other path. A key that no route matches is reported by the build (openapi.e2e-spec.ts allows it
 * only for areas still being built).
 */
export const EXPANSIONS: Record<string, string[]> = {
  'PUT /projects/{id}/repository/branches/{branch}': [
    '/projects/{id}/repository/branches/{branch}/protect',
    '/projects/{id}/repository/branches/{branch}/unprotect',
  ],
  'POST /projects/{id}/repository/tags/{tag}': ['/projects/{id}/repository/tags/{tag}/release'],
  'PUT /projects/{id}/repository/tags/{tag}': ['/projects/{id}/repository/tags/{tag}/release'],
  // the HTTP pipeline strips `.json` from API paths: the route is `openapi`, clients ask for openapi.json
  'GET /openapi': ['/openapi.json'],
  // legacy merge request comments (`{note, author}`) live on the notes route set, for merge requests only
  'GET /projects/{id}/{noteable}/{noteableId}/comments': [
    '/projects/{id}/merge_requests/{noteableId}/comments',
    '/projects/{id}/merge_request/{noteableId}/comments',
  ],
  'POST /projects/{id}/{noteable}/{noteableId}/comments': [
    '/projects/{id}/merge_requests/{noteableId}/comments',
    '/projects/{id}/merge_request/{noteableId}/comments',
  ],
  'GET /projects/{id}/repository/{archive}': ['/projects/{id}/repository/archive', '/projects/{id}/repository/archive.{format}'],
};

/**
 * Path parameters that stand for a kind: a route such as `/projects/:id/:noteable/:noteableId/notes`
 * (one route set for every noteable, checked by the service) is documented once per value, as the
 * literal paths clients call (`/projects/{id}/issues/{issue_id}/notes`, ...). Applied after
 * EXPANSIONS, to whatever `{param}` is left.
 */
export const KIND_PARAMS: Record<string, string[]> = {
  noteable: ['issues', 'snippets', 'merge_requests', 'merge_request'],
};

/** Every literal path a (possibly kind-templated) app path stands for. */
export function expandKinds(path: string): string[] {
  const segments = path.split('/');
  const i = segments.findIndex((seg) => /^\{\w+\}$/.test(seg) && KIND_PARAMS[seg.slice(1, -1)] !== undefined);
  if (i < 0) return [path];
  return KIND_PARAMS[segments[i].slice(1, -1)].flatMap((value) => expandKinds([...segments.slice(0, i), value, ...segments.slice(i + 1)].join('/')));
}

/**
 * GitLab's name of a path parameter, from the collection segment before it. The first parameter of a
 * path is the resource's `id` (`/projects/:id`, `/users/:id`, `/runners/:id`), except where GitLab names
 * it otherwise (`/licenses/:key`, `/projects/search/:query`, `/users/:uid/keys`).
 */
const FIRST: Record<string, string | ((nested: boolean) => string)> = {
  licenses: 'key',
  search: 'query',
  user: 'user_id', // POST /projects/user/:user_id
  users: (nested) => (nested ? 'uid' : 'id'),
};

const NESTED: Record<string, string> = {
  issues: 'issue_id',
  merge_requests: 'merge_request_id',
  merge_request: 'merge_request_id',
  snippets: 'snippet_id',
  notes: 'note_id',
  milestones: 'milestone_id',
  labels: 'label_id',
  members: 'user_id',
  projects: 'project_id',
  keys: 'id',
  emails: 'id',
  branches: 'branch',
  tags: 'tag_name',
  commits: 'sha',
  statuses: 'sha',
  blobs: 'sha',
  raw_blobs: 'sha',
  builds: 'build_id',
  pipelines: 'pipeline_id',
  runners: 'runner_id',
  triggers: 'token',
  variables: 'key',
  hooks: 'hook_id',
};

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

/**
 * Renames the `{param}` segments of an app path to GitLab's names. Returns the new path and the
 * mapping (app name → GitLab name). A name already taken earlier in the path falls back to the app's
 * name in snake_case, so templates stay unambiguous.
 */
export function gitlabPath(path: string): { path: string; names: Map<string, string> } {
  const prefix = path.startsWith('/ci/api/v1/') ? '/ci/api/v1' : '';
  const segments = path.slice(prefix.length).split('/');
  const names = new Map<string, string>();
  const used = new Set<string>();
  let seenParam = false;
  const out = segments.map((seg, i) => {
    const m = /^\{(\w+)\}$/.exec(seg);
    if (!m) return seg;
    const prev = segments[i - 1] ?? '';
    const nested = i < segments.length - 1;
    let name: string;
    if (!seenParam) {
      const rule = FIRST[prev];
      name = rule === undefined ? 'id' : typeof rule === 'function' ? rule(nested) : rule;
    } else {
      name = NESTED[prev] ?? snake(m[1]);
    }
    if (used.has(name)) name = snake(m[1]);
    seenParam = true;
    used.add(name);
    names.set(m[1], name);
    return `{${name}}`;
  });
  return { path: prefix + out.join('/'), names };
}

const INTEGER_PARAMS = new Set([
  'issue_id',
  'merge_request_id',
  'snippet_id',
  'note_id',
  'milestone_id',
  'user_id',
  'build_id',
  'runner_id',
  'hook_id',
  'uid',
  'key_id',
  'email_id',
  'pipeline_id',
]);

/** Collections whose `:id` is a number (projects and groups also take a path). */
const INTEGER_ID_COLLECTIONS = new Set(['users', 'keys', 'emails', 'runners', 'hooks', 'builds']);

/** The suffixes of `GET .../repository/archive.<format>` (../shared/docs/gitlab-compat.md §5). */
const ARCHIVE_FORMATS = ['zip', 'tar', 'tar.gz', 'tgz', 'gz', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2'];

const DESCRIPTIONS: Record<string, string> = {
  project: 'Project id, or NAMESPACE%2FPROJECT_NAME',
  group: 'Group id or path',
  branch: 'Branch name; a `/` in it may be sent raw or as %2F',
  tag_name: 'Tag name; a `/` in it may be sent raw or as %2F',
  sha: 'Commit SHA, branch or tag name',
  label_id: 'Label id or title',
  format: 'Archive format (bz2 variants give tar.bz2; anything else but tar and zip gives tar.gz)',
  query: 'Text the project name must contain',
  key: 'Key',
  token: 'Trigger token',
};

/** The OpenAPI description of a path parameter of `path` (a GitLab path as returned by gitlabPath). */
export function pathParameter(path: string, name: string): Record<string, unknown> {
  const segments = path.split('/');
  const at = segments.findIndex((s) => s.includes(`{${name}}`));
  const prev = segments[at - 1] ?? '';
  const integer = INTEGER_PARAMS.has(name) || (name === 'id' && INTEGER_ID_COLLECTIONS.has(prev));
  let description = DESCRIPTIONS[name];
  if (name === 'id' && (prev === 'projects' || prev === 'fork')) description = DESCRIPTIONS.project;
  if (name === 'id' && prev === 'groups') description = DESCRIPTIONS.group;
  if (name === 'key' && prev === 'licenses') description = 'License key (e.g. mit)';
  if (name === 'key' && prev === 'variables') description = 'Variable key';
  let schema: Record<string, unknown> = integer ? { type: 'integer' } : { type: 'string' };
  if (name === 'format') schema = { type: 'string', enum: ARCHIVE_FORMATS };
  return {
    name,
    in: 'path',
    required: true,
    schema,
    ...(description ? { description } : {}),
  };
}
