/**
 * Response schemas of the v3 entities, as the spec's "Resources and their fields" and
 * gitlab-compat.md §2 (GitLab 8.8's lib/api/entities.rb) define them, with the additions the
 * presenters make (spec-decisions 4: both spellings where they differ). Properties are listed in the
 * order the server emits them; `required` lists the keys every instance carries (conditional keys,
 * such as a project's `owner` or `runners_token`, are optional).
 *
 * Entities of areas still being built (merge requests, builds, runners, triggers, variables, system
 * hooks) follow the spec and gitlab-compat.md; check them when those modules land.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const int = (description?: string): Schema => ({ type: 'integer', ...(description ? { description } : {}) });
const bool = (description?: string): Schema => ({ type: 'boolean', ...(description ? { description } : {}) });
const num = (): Schema => ({ type: 'number' });
const time = (): Schema => ({ type: 'string', format: 'date-time' });
const date = (): Schema => ({ type: 'string', format: 'date' });
const nullable = (s: Schema): Schema => (s.$ref ? { allOf: [s], nullable: true } : { ...s, nullable: true });
const array = (items: Schema): Schema => ({ type: 'array', items });
const enumOf = (values: string[], description?: string): Schema => ({ ...str(description), enum: values });
const anyObject = (description?: string): Schema => ({ type: 'object', additionalProperties: true, ...(description ? { description } : {}) });

/** An object schema: every property required unless listed in `optional`. */
function object(properties: Record<string, Schema>, optional: string[] = [], description?: string): Schema {
  const required = Object.keys(properties).filter((k) => !optional.includes(k));
  return { type: 'object', ...(description ? { description } : {}), properties, ...(required.length ? { required } : {}) };
}

/** The custom notification level's switches (src/notifications/notification-levels.ts CUSTOM_EVENTS). */
const NOTIFICATION_EVENTS = [
  'new_note', 'new_issue', 'reopen_issue', 'close_issue', 'reassign_issue', 'new_merge_request', 'reopen_merge_request',
  'close_merge_request', 'reassign_merge_request', 'merge_merge_request', 'failed_pipeline', 'success_pipeline',
];

const USER_BASIC = {
  name: str(),
  username: str(),
  id: int(),
  state: enumOf(['active', 'blocked', 'ldap_blocked']),
  avatar_url: nullable(str('Gravatar URL, or null when Gravatar is disabled')),
  web_url: str(),
};

const USER = {
  ...USER_BASIC,
  created_at: time(),
  is_admin: bool(),
  bio: nullable(str()),
  location: nullable(str()),
  skype: str(),
  linkedin: str(),
  twitter: str(),
  website_url: str(),
};

const USER_FULL = {
  ...USER,
  last_sign_in_at: nullable(time()),
  confirmed_at: nullable(time()),
  email: str(),
  theme_id: int(),
  color_scheme_id: int(),
  projects_limit: int(),
  current_sign_in_at: nullable(time()),
  identities: array(object({ provider: str(), extern_uid: str() })),
  can_create_group: bool(),
  can_create_project: bool(),
  two_factor_enabled: bool(),
  external: bool(),
};

/** The leading keys of a project's numbered items (issues, merge requests, milestones). */
const PROJECT_ITEM = {
  id: int(),
  iid: int(),
  project_id: int(),
  title: str(),
  description: nullable(str()),
};

const MILESTONE = {
  ...PROJECT_ITEM,
  description: str('"" when none was given (spec-decisions 33)'),
  state: enumOf(['active', 'closed']),
  created_at: time(),
  updated_at: time(),
  due_date: nullable(date()),
};

const NOTE = {
  id: int(),
  body: str(),
  attachment: nullable(str('file name of the attachment')),
  author: ref('Author'),
  created_at: time(),
  updated_at: time(),
  system: bool(),
  noteable_id: int(),
  noteable_type: enumOf(['Issue', 'Snippet', 'MergeRequest']),
  upvote: bool(),
  downvote: bool(),
};

const REPO_COMMIT = {
  id: str('full SHA'),
  short_id: str('the first 8 hex digits of the SHA'),
  title: str(),
  author_name: str(),
  author_email: str(),
  created_at: time(),
  message: str(),
  parent_ids: array(str()),
};

const ACCESS = nullable(object({ access_level: int(), notification_level: int() }));

const RUNNER = {
  id: int(),
  description: nullable(str()),
  active: bool(),
  is_shared: bool(),
  name: nullable(str()),
};

const GROUP = {
  id: int(),
  name: str(),
  path: str(),
  description: nullable(str()),
  visibility_level: int(),
  avatar_url: nullable(str()),
  web_url: str(),
};

const SSH_KEY = { id: int(), title: str(), key: str(), created_at: time() };

const PROJECT_SUMMARY = object({
  id: int(),
  name: str(),
  name_with_namespace: str(),
  path: str(),
  path_with_namespace: str(),
});

const MERGE_REQUEST = {
  ...PROJECT_ITEM,
  state: enumOf(['opened', 'closed', 'merged'], 'a reopened or locked (merging) request reads opened'),
  created_at: time(),
  updated_at: time(),
  target_branch: str(),
  source_branch: str(),
  upvotes: int(),
  downvotes: int(),
  author: ref('Author'),
  assignee: nullable(ref('UserBasic')),
  source_project_id: int(),
  target_project_id: int(),
  labels: array(str()),
  work_in_progress: bool(),
  milestone: nullable(ref('Milestone')),
  merge_when_build_succeeds: bool(),
  merge_status: enumOf(['unchecked', 'can_be_merged', 'cannot_be_merged']),
  subscribed: bool(),
  user_notes_count: int(),
};

/** Delivery health of a hook (this server's addition; GitLab 8.8 had none). */
const HOOK_HEALTH = {
  recent_failures: int(),
  last_status: nullable(int()),
  last_error: nullable(str()),
  last_failure_at: nullable(time()),
  disabled: bool(),
};

const HOOK_EVENTS = {
  push_events: bool(),
  tag_push_events: bool(),
  issues_events: bool(),
  merge_requests_events: bool(),
  note_events: bool(),
  build_events: bool(),
  enable_ssl_verification: bool(),
};

export const ENTITY_SCHEMAS: Record<string, Schema> = {
  Error: object(
    { message: { oneOf: [str(), anyObject('field → array of messages')] } },
    [],
    'GitLab error body: `{"message": "404 Project Not Found"}`, `{"message": "400 (Bad request) \\"title\\" not given"}` or a field map `{"message": {"title": ["can\'t be blank"]}}`',
  ),

  // --- users, keys, emails, namespaces, groups, members ---

  // --- projects and events ---

  // --- issues, milestones, labels, notes, snippets ---

  // --- repository ---

  // --- merge requests (module in progress) ---

  // --- CI (modules in progress) ---

  // --- admin: hooks, settings; licenses ---
};
