'use strict';
/**
 * Baseline for bench/lists.bench.js: a bare `node:http` server answering, for a signed-in user,
 *   GET /api/v3/projects                      (the projects the user is a member of)
 *   GET /api/v3/projects/:id/issues
 *   GET /api/v3/projects/:id/merge_requests
 * with page/per_page (the default order and no filters: other parameters answer 501), and the same
 * work as the app: PRIVATE-TOKEN → one indexed lookup of its HMAC digest in `users`; then the very
 * SQL statements the app sends for these routes (the page with its window count; for projects the
 * counts, owners and memberships of the page in one statement; for issues and merge requests the
 * project with the caller's memberships — the access check —, the page with its authors,
 * assignees, milestones, note statistics and subscriptions in one statement, then the labels); the
 * same access rules; the same JSON (same keys, same order) and pagination headers; on a `pg` Pool
 * of the app's size. No framework, no ORM, no cache but the app settings' (5 s, like the app).
 *
 * Env: DATABASE_URL, PORT, HOST, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE (default 10).
 */
const { createHash } = require('node:crypto');
const { types } = require('pg');
const { bareSetup, pageRequest, paginationHeaders } = require('./bare-common');

// `date` columns (milestones.due_date) as the 'YYYY-MM-DD' text the API shows.
types.setTypeParser(1082, (v) => v);

const { EXTERNAL_URL, pool, digest, gravatarEnabled, serve } = bareSetup(8082);
const SSH_HOST = new URL(EXTERNAL_URL).hostname;

// ------------------------------------------------------------------------------------------------
// The select lists of the app's statements (TypeORM's, from the entities), written out.
const USER_FIELDS = [
  ['id', 'id'],
  ['username', 'username'],
  ['email', 'email'],
  ['name', 'name'],
  ['encrypted_password', 'encryptedPassword'],
  ['state', 'state'],
  ['admin', 'admin'],
  ['projects_limit', 'projectsLimit'],
  ['can_create_group', 'canCreateGroup'],
  ['external', 'external'],
  ['bio', 'bio'],
  ['location', 'location'],
  ['skype', 'skype'],
  ['linkedin', 'linkedin'],
  ['twitter', 'twitter'],
  ['website_url', 'websiteUrl'],
  ['theme_id', 'themeId'],
  ['color_scheme_id', 'colorSchemeId'],
  ['two_factor_enabled', 'twoFactorEnabled'],
  ['confirmed_at', 'confirmedAt'],
  ['last_sign_in_at', 'lastSignInAt'],
  ['current_sign_in_at', 'currentSignInAt'],
  ['sign_in_count', 'signInCount'],
  ['private_token_digest', 'privateTokenDigest'],
  ['private_token_encrypted', 'privateTokenEncrypted'],
  ['created_at', 'createdAt'],
  ['updated_at', 'updatedAt'],
];
const PROJECT_COLUMNS = [
  'id',
  'name',
  'path',
  'description',
  'namespace_id',
  'creator_id',
  'visibility_level',
  'default_branch',
  'issues_enabled',
  'merge_requests_enabled',
  'wiki_enabled',
  'builds_enabled',
  'snippets_enabled',
  'container_registry_enabled',
  'shared_runners_enabled',
  'public_builds',
  'archived',
  'star_count',
  'forked_from_project_id',
  'import_url',
  'import_status',
  'import_error',
  'runners_token_digest',
  'runners_token_encrypted',
  'last_activity_at',
  'created_at',
  'updated_at',
];
const NAMESPACE_COLUMNS = ['id', 'name', 'path', 'kind', 'owner_id', 'description', 'visibility_level', 'created_at', 'updated_at'];
const ISSUE_COLUMNS = [
  'id',
  'iid',
  'project_id',
  'title',
  'description',
  'state',
  'confidential',
  'author_id',
  'assignee_id',
  'milestone_id',
  'moved_to_id',
  'position',
  'deleted_at',
  'created_at',
  'updated_at',
];
const MILESTONE_COLUMNS = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'due_date', 'created_at', 'updated_at'];
const MR_COLUMNS = [
  'id',
  'iid',
  'project_id',
  'source_project_id',
  'source_branch',
  'target_branch',
  'title',
  'description',
  'state',
  'merge_status',
  'author_id',
  'assignee_id',
  'milestone_id',
  'merge_when_build_succeeds',
  'merge_user_id',
  'merge_params',
  'merge_commit_sha',
  'merged_at',
  'deleted_at',
  'created_at',
  'updated_at',
];

/** `alias."col" AS "prefix.col"`, as the app's joined rows (JoinedEntity) read them. */
const joined = (alias, prefix, cols) => cols.map((c) => `${alias}."${c}" AS "${prefix}.${c}"`).join(', ');
const joinedUser = (alias, prefix) => USER_FIELDS.map(([c, p]) => `${alias}."${c}" AS "${prefix}.${p}"`).join(', ');

const USER_COLUMNS = USER_FIELDS.map(([c]) => c).join(', ');

/** The projects the user is a member of (memberProjects in src/common/policy/visibility.ts). */
const MEMBER_FROM = `FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE ((p.namespace_id IN (SELECT id FROM namespaces WHERE kind = 'user' AND owner_id = $1)
         OR p.id IN (SELECT project_id FROM project_members WHERE user_id = $1)
         OR p.namespace_id IN (SELECT namespace_id FROM group_members WHERE user_id = $1)))`;

/** Their page, newest first, with the window count (ProjectsRepository.list). */
const MEMBER_PROJECTS_SQL = (perPage, offset) =>
  `SELECT ${joined('p', 'p', PROJECT_COLUMNS)}, ${joined('n', 'n', NAMESPACE_COLUMNS)}, count(*) OVER () AS "window_total" ${MEMBER_FROM}
        ORDER BY p.created_at DESC, p.id DESC LIMIT ${perPage} OFFSET ${offset}`;

/** Counts, owner and the viewer's memberships of each project of a page (ProjectsRepository.listExtras). */
const PROJECT_EXTRAS_SQL = `SELECT x.id AS "id",
              (SELECT count(*)::int FROM projects f WHERE f.forked_from_project_id = x.id) AS "forks",
              (SELECT count(*)::int FROM issues i
                WHERE i.project_id = x.id AND i.state IN ('opened', 'reopened') AND i.deleted_at IS NULL) AS "open_issues",
              pm.access_level AS "pm_access_level", pm.notification_level AS "pm_notification_level",
              gm.access_level AS "gm_access_level", gm.notification_level AS "gm_notification_level",
              ${joinedUser('u', 'owner')}
         FROM unnest($1::int[], $2::int[]) AS x(id, namespace_id)
         JOIN namespaces n ON n.id = x.namespace_id
         LEFT JOIN users u ON n.kind = 'user' AND u.id = n.owner_id
         LEFT JOIN project_members pm ON pm.project_id = x.id AND pm.user_id = $3
         LEFT JOIN group_members gm ON gm.namespace_id = x.namespace_id AND gm.user_id = $3`;

/** The project with the caller's project and group memberships (ProjectResolver): the access check. */
const RESOLVE_SQL = `SELECT ${joined('p', 'p', PROJECT_COLUMNS)}, ${joined('n', 'n', NAMESPACE_COLUMNS)},
              pm.access_level AS "pm_access_level", pm.notification_level AS "pm_notification_level",
              gm.access_level AS "gm_access_level", gm.notification_level AS "gm_notification_level"
         FROM projects p JOIN namespaces n ON n.id = p.namespace_id
         LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = $1
         LEFT JOIN group_members gm ON gm.namespace_id = p.namespace_id AND gm.user_id = $1
        WHERE p.id = $2
        LIMIT 1`;

/** A page of issues with authors, assignees, milestones, note statistics and subscriptions (IssuesRepository.listDetailed). */
function issuesSqlText(visibility, perPage, offset, v, pat) {
  return `WITH page AS MATERIALIZED (SELECT "i"."id" AS "id", count(*) OVER () AS "total" FROM "issues" "i" WHERE "i"."deleted_at" IS NULL AND "i"."project_id" = $1 AND ${visibility} ORDER BY "i"."created_at" DESC, "i"."id" DESC LIMIT ${perPage} OFFSET ${offset})
       SELECT page.total AS "total", ${joined('i', 'i', ISSUE_COLUMNS)}, ${joinedUser('a', 'author')},
              ${joinedUser('s', 'assignee')}, ${joined('m', 'm', MILESTONE_COLUMNS)},
              ns.user_notes AS "ns.user_notes", ns.commented AS "ns.commented", ns.mentioned AS "ns.mentioned",
              (SELECT sub.subscribed FROM subscriptions sub
                WHERE sub.user_id = ${v} AND sub.subscribable_type = 'Issue' AND sub.subscribable_id = i.id) AS "explicit"
         FROM page JOIN issues i ON i.id = page.id
         LEFT JOIN users a ON a.id = i.author_id
         LEFT JOIN users s ON s.id = i.assignee_id
         LEFT JOIN milestones m ON m.id = i.milestone_id
         LEFT JOIN LATERAL (
           SELECT count(*) FILTER (WHERE NOT n.system)::int AS user_notes,
                  coalesce(bool_or(NOT n.system AND n.author_id = ${v}), false) AS commented,
                  coalesce(bool_or(NOT n.system AND n.body ~* ${pat}), false) AS mentioned
             FROM notes n WHERE n.noteable_type = 'Issue' AND n.noteable_id = i.id) ns ON TRUE
        ORDER BY i.created_at DESC, i.id DESC`;
}

/** The same for merge requests, with votes (MergeRequestsRepository.listDetailed). */
function mergeRequestsSqlText(perPage, offset) {
  return `WITH page AS MATERIALIZED (SELECT "mr"."id" AS "id", count(*) OVER () AS "total" FROM "merge_requests" "mr" WHERE "mr"."project_id" = $1 AND "mr"."deleted_at" IS NULL ORDER BY "mr"."created_at" DESC, "mr"."id" DESC LIMIT ${perPage} OFFSET ${offset})
       SELECT page.total AS "total", ${joined('mr', 'mr', MR_COLUMNS)}, ${joinedUser('a', 'author')},
              ${joinedUser('s', 'assignee')}, ${joined('m', 'm', MILESTONE_COLUMNS)},
              ns.user_notes AS "ns.user_notes", ns.up AS "ns.up", ns.down AS "ns.down",
              ns.commented AS "ns.commented", ns.mentioned AS "ns.mentioned",
              (SELECT sub.subscribed FROM subscriptions sub
                WHERE sub.user_id = $2 AND sub.subscribable_type = 'MergeRequest' AND sub.subscribable_id = mr.id) AS "explicit"
         FROM page JOIN merge_requests mr ON mr.id = page.id
         LEFT JOIN users a ON a.id = mr.author_id
         LEFT JOIN users s ON s.id = mr.assignee_id
         LEFT JOIN milestones m ON m.id = mr.milestone_id
         LEFT JOIN LATERAL (
           SELECT count(*) FILTER (WHERE NOT n.system)::int AS user_notes,
                  count(*) FILTER (WHERE NOT n.system AND btrim(n.body) IN ('+1', ':+1:', ':thumbsup:'))::int AS up,
                  count(*) FILTER (WHERE NOT n.system AND btrim(n.body) IN ('-1', ':-1:', ':thumbsdown:'))::int AS down,
                  coalesce(bool_or(NOT n.system AND n.author_id = $2), false) AS commented,
                  coalesce(bool_or(NOT n.system AND n.body ~* $3), false) AS mentioned
             FROM notes n WHERE n.noteable_type = 'MergeRequest' AND n.noteable_id = mr.id) ns ON TRUE
        ORDER BY mr.created_at DESC, mr.id DESC`;
}

/** Each statement's text built once (per page size, offset and visibility), as a server would keep it. */
const memo = (build) => {
  const texts = new Map();
  return (...args) => {
    const k = args.join('\0');
    let t = texts.get(k);
    if (t === undefined) texts.set(k, (t = build(...args)));
    return t;
  };
};
const issuesSql = memo(issuesSqlText);
const mergeRequestsSql = memo(mergeRequestsSqlText);
const memberProjectsSql = memo(MEMBER_PROJECTS_SQL);

/** Labels of a page of issues or merge requests (LabelsRepository.labelsOf). */
const LABELS_SQL = `SELECT ll.target_id, l.id, l.project_id, l.title, l.color, l.description, l.template, l.created_at, l.updated_at
         FROM label_links ll JOIN labels l ON l.id = ll.label_id
        WHERE ll.target_type = $1 AND ll.target_id = ANY($2)
        ORDER BY lower(l.title) COLLATE "C" ASC, l.id ASC`;

async function authenticate(req, query) {
  const q = query.get('private_token');
  const h = req.headers['private-token'];
  const token = q !== null && q !== '' ? q : typeof h === 'string' && h !== '' ? h : undefined;
  if (!token || token.length > 255) return undefined;
  const { rows } = await pool.query(`SELECT ${USER_COLUMNS} FROM users WHERE private_token_digest = $1 LIMIT 1`, [digest(token)]);
  const user = rows[0];
  return user && user.state === 'active' ? user : undefined;
}

function avatarUrl(email, gravatar) {
  if (!gravatar) return null;
  return `https://www.gravatar.com/avatar/${createHash('md5').update(email.trim().toLowerCase()).digest('hex')}?s=80&d=identicon`;
}

/** UserBasic from a joined row (`prefix.column` keys, property names). */
function userBasic(r, prefix, gravatar) {
  const username = r[`${prefix}.username`];
  return {
    name: r[`${prefix}.name`],
    username,
    id: r[`${prefix}.id`],
    state: r[`${prefix}.state`],
    avatar_url: avatarUrl(r[`${prefix}.email`], gravatar),
    web_url: `${EXTERNAL_URL}/u/${username}`,
  };
}

/** An author: UserBasic, created_at, and the email for an administrator. */
function author(r, viewer, gravatar) {
  if (r['author.id'] === null) return null;
  const a = userBasic(r, 'author', gravatar);
  a.created_at = r['author.createdAt'];
  if (viewer.admin) a.email = r['author.email'];
  return a;
}

function milestone(r) {
  if (r['m.id'] === null) return null;
  return {
    id: r['m.id'],
    iid: r['m.iid'],
    project_id: r['m.project_id'],
    title: r['m.title'],
    description: r['m.description'],
    state: r['m.state'],
    created_at: r['m.created_at'],
    updated_at: r['m.updated_at'],
    due_date: r['m.due_date'],
  };
}

const membership = (access, notification) => (access === null ? null : { access_level: access, notification_level: notification });

/** The caller's access level to a project (accessFrom) and whether it may read it (projectAbilities), from the resolver's row. */
function projectAccess(viewer, p) {
  const owner = p['n.kind'] === 'user' && p['n.owner_id'] === viewer.id ? 50 : 0;
  const level = viewer.admin ? 50 : Math.max(p.pm_access_level ?? 0, p.gm_access_level ?? 0, owner);
  const visibility = p['p.visibility_level'];
  const readable = level >= 10 || visibility === 20 || (visibility === 10 && !viewer.external);
  return { level, readable };
}

/** The labels of the targets, titles by target id, in the app's order. */
async function labelTitles(type, ids) {
  const out = new Map();
  if (ids.length === 0) return out;
  const { rows } = await pool.query(LABELS_SQL, [type, ids]);
  for (const r of rows) {
    const list = out.get(r.target_id);
    if (list) list.push(r.title);
    else out.set(r.target_id, [r.title]);
  }
  return out;
}

function escapeRegex(s) {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}
const mentionPattern = (username) => `(^|[^A-Za-z0-9_])@${escapeRegex(username)}($|[^A-Za-z0-9_.-]|[.]($|[^A-Za-z0-9_-]))`;
const WIP = /^\s*(\[WIP\]\s*|WIP:\s*|WIP\s+)+/i;

function send(res, status, body, headers = {}) {
  const json = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

/** Only page and per_page (and the token): the baseline serves the default order, unfiltered. */
function onlyPaging(query) {
  for (const k of query.keys()) if (k !== 'page' && k !== 'per_page' && k !== 'private_token') return false;
  return true;
}

// ------------------------------------------------------------------------------------------------
async function listProjects(viewer, query, path, gravatar) {
  const page = pageRequest(query);
  const { rows } = await pool.query(memberProjectsSql(page.perPage, page.offset), [viewer.id]);
  let total = rows.length ? Number(rows[0].window_total) : 0;
  if (!rows.length && page.offset > 0) {
    total = (await pool.query(`SELECT count(*)::int AS "n" ${MEMBER_FROM}`, [viewer.id])).rows[0].n;
  }
  if (rows.some((p) => p['p.forked_from_project_id'] !== null)) return { status: 501, body: { message: 'baseline does not present forks' } };
  const extras = new Map();
  if (rows.length) {
    const x = await pool.query(PROJECT_EXTRAS_SQL, [rows.map((p) => p['p.id']), rows.map((p) => p['p.namespace_id']), viewer.id]);
    for (const r of x.rows) extras.set(r.id, r);
  }
  const body = rows.map((p) => {
    const x = extras.get(p['p.id']);
    const full = `${p['n.path']}/${p['p.path']}`;
    const owner = p['n.kind'] === 'user' && x['owner.id'] !== null ? x : null;
    const view = {
      id: p['p.id'],
      description: p['p.description'],
      default_branch: p['p.default_branch'],
      tag_list: [],
      public: p['p.visibility_level'] === 20,
      archived: p['p.archived'],
      visibility_level: p['p.visibility_level'],
      ssh_url_to_repo: `git@${SSH_HOST}:${full}.git`,
      http_url_to_repo: `${EXTERNAL_URL}/${full}.git`,
      web_url: `${EXTERNAL_URL}/${full}`,
    };
    if (owner) view.owner = { ...userBasic(owner, 'owner', gravatar), created_at: owner['owner.createdAt'] };
    view.name = p['p.name'];
    view.name_with_namespace = `${owner ? owner['owner.name'] : p['n.name']} / ${p['p.name']}`;
    view.path = p['p.path'];
    view.path_with_namespace = full;
    view.issues_enabled = p['p.issues_enabled'];
    view.merge_requests_enabled = p['p.merge_requests_enabled'];
    view.wiki_enabled = p['p.wiki_enabled'];
    view.builds_enabled = p['p.builds_enabled'];
    view.snippets_enabled = p['p.snippets_enabled'];
    view.container_registry_enabled = p['p.container_registry_enabled'];
    view.created_at = p['p.created_at'];
    view.last_activity_at = p['p.last_activity_at'];
    view.shared_runners_enabled = p['p.shared_runners_enabled'];
    view.creator_id = p['p.creator_id'];
    view.namespace = {
      id: p['n.id'],
      name: p['n.name'],
      path: p['n.path'],
      kind: p['n.kind'],
      owner_id: p['n.owner_id'],
      created_at: p['n.created_at'],
      updated_at: p['n.updated_at'],
      type: p['n.kind'] === 'group' ? 'Group' : null,
      description: p['n.description'],
      avatar: null,
      share_with_group_lock: false,
      visibility_level: p['n.visibility_level'],
    };
    view.avatar_url = null;
    view.star_count = p['p.star_count'];
    view.forks_count = x.forks;
    if (p['p.issues_enabled']) view.open_issues_count = x.open_issues;
    view.public_builds = p['p.public_builds'];
    view.import_status = p['p.import_status'];
    view.permissions = {
      project_access: membership(x.pm_access_level, x.pm_notification_level),
      group_access: membership(x.gm_access_level, x.gm_notification_level),
    };
    return view;
  });
  return { status: 200, body, headers: paginationHeaders(EXTERNAL_URL, path, query, total, page) };
}

/** The project `id` if the viewer may read it and its `feature` (`issues` or `merge_requests`): the resolver's statement. */
async function resolve(viewer, id, feature) {
  const { rows } = await pool.query(RESOLVE_SQL, [viewer.id, id]);
  const p = rows[0];
  if (!p) return { error: { status: 404, body: { message: '404 Project Not Found' } } };
  const access = projectAccess(viewer, p);
  if (!access.readable) return { error: { status: 404, body: { message: '404 Project Not Found' } } };
  if (!p[`p.${feature}_enabled`]) return { error: { status: 403, body: { message: '403 Forbidden' } } };
  return { project: p, access };
}

/** Subscribed: the explicit choice, else whether the viewer takes part (author, assignee, commenter, mentioned). */
function subscribed(viewer, r, prefix, mention) {
  if (r.explicit !== null) return r.explicit;
  const description = r[`${prefix}.description`];
  return (
    r[`${prefix}.author_id`] === viewer.id ||
    r[`${prefix}.assignee_id`] === viewer.id ||
    r['ns.commented'] ||
    r['ns.mentioned'] ||
    (!!description && mention.test(description))
  );
}

async function listIssues(viewer, projectId, query, path, gravatar) {
  const { project, access, error } = await resolve(viewer, projectId, 'issues');
  if (error) return error;
  const page = pageRequest(query);
  const params = [project['p.id']];
  let visibility = 'TRUE';
  if (!(viewer.admin || access.level >= 10)) {
    params.push(viewer.id);
    visibility = '(NOT "i"."confidential" OR "i"."author_id" = $2 OR "i"."assignee_id" = $2)';
  }
  const pattern = mentionPattern(viewer.username);
  const sql = issuesSql(visibility, page.perPage, page.offset, `$${params.length + 1}`, `$${params.length + 2}`);
  const { rows } = await pool.query(sql, [...params, viewer.id, pattern]);
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && page.offset > 0) {
    const c = await pool.query(
      `SELECT COUNT(DISTINCT("i"."id")) AS "cnt" FROM "issues" "i" WHERE "i"."deleted_at" IS NULL AND "i"."project_id" = $1 AND ${visibility}`,
      params,
    );
    total = Number(c.rows[0].cnt);
  }
  const labels = await labelTitles(
    'Issue',
    rows.map((r) => r['i.id']),
  );
  const mention = new RegExp(pattern, 'i');
  const body = rows.map((r) => ({
    id: r['i.id'],
    iid: r['i.iid'],
    project_id: r['i.project_id'],
    title: r['i.title'],
    description: r['i.description'],
    state: r['i.state'] === 'closed' ? 'closed' : 'opened',
    created_at: r['i.created_at'],
    updated_at: r['i.updated_at'],
    labels: labels.get(r['i.id']) ?? [],
    milestone: milestone(r),
    assignee: r['assignee.id'] === null ? null : userBasic(r, 'assignee', gravatar),
    author: author(r, viewer, gravatar),
    subscribed: subscribed(viewer, r, 'i', mention),
    user_notes_count: r['ns.user_notes'],
  }));
  return { status: 200, body, headers: paginationHeaders(EXTERNAL_URL, path, query, total, page) };
}

async function listMergeRequests(viewer, projectId, query, path, gravatar) {
  const { project, error } = await resolve(viewer, projectId, 'merge_requests');
  if (error) return error;
  const page = pageRequest(query);
  const pattern = mentionPattern(viewer.username);
  const { rows } = await pool.query(mergeRequestsSql(page.perPage, page.offset), [project['p.id'], viewer.id, pattern]);
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && page.offset > 0) {
    const c = await pool.query(`SELECT count(*)::int AS n FROM merge_requests WHERE project_id = $1 AND deleted_at IS NULL`, [project['p.id']]);
    total = c.rows[0].n;
  }
  const labels = await labelTitles(
    'MergeRequest',
    rows.map((r) => r['mr.id']),
  );
  const mention = new RegExp(pattern, 'i');
  const body = rows.map((r) => {
    const state = r['mr.state'];
    return {
      id: r['mr.id'],
      iid: r['mr.iid'],
      project_id: r['mr.project_id'],
      title: r['mr.title'],
      description: r['mr.description'],
      state: state === 'reopened' || state === 'locked' ? 'opened' : state,
      created_at: r['mr.created_at'],
      updated_at: r['mr.updated_at'],
      target_branch: r['mr.target_branch'],
      source_branch: r['mr.source_branch'],
      upvotes: r['ns.up'],
      downvotes: r['ns.down'],
      author: author(r, viewer, gravatar),
      assignee: r['assignee.id'] === null ? null : userBasic(r, 'assignee', gravatar),
      source_project_id: r['mr.source_project_id'],
      target_project_id: r['mr.project_id'],
      labels: labels.get(r['mr.id']) ?? [],
      work_in_progress: WIP.test(r['mr.title']),
      milestone: milestone(r),
      merge_when_build_succeeds: r['mr.merge_when_build_succeeds'],
      merge_status: r['mr.merge_status'],
      subscribed: subscribed(viewer, r, 'mr', mention),
      user_notes_count: r['ns.user_notes'],
    };
  });
  return { status: 200, body, headers: paginationHeaders(EXTERNAL_URL, path, query, total, page) };
}

const PROJECT_LIST = /^\/api\/v3\/projects\/(\d{1,9})\/(issues|merge_requests)$/;

async function handle(req, res) {
  const qi = req.url.indexOf('?');
  const path = qi === -1 ? req.url : req.url.slice(0, qi);
  const query = new URLSearchParams(qi === -1 ? '' : req.url.slice(qi + 1));
  if (req.method !== 'GET') return send(res, 404, { message: '404 Not Found' });
  if (path === '/-/readiness') {
    await pool.query('SELECT 1');
    return send(res, 200, { status: 'ok', checks: { database: 'ok' } });
  }
  const m = PROJECT_LIST.exec(path);
  if (path !== '/api/v3/projects' && !m) return send(res, 404, { message: '404 Not Found' });
  const viewer = await authenticate(req, query);
  if (!viewer) return send(res, 401, { message: '401 Unauthorized' });
  if (!onlyPaging(query)) return send(res, 501, { message: 'baseline serves page and per_page only' });
  const gravatar = await gravatarEnabled();
  const r = !m
    ? await listProjects(viewer, query, path, gravatar)
    : m[2] === 'issues'
      ? await listIssues(viewer, Number(m[1]), query, path, gravatar)
      : await listMergeRequests(viewer, Number(m[1]), query, path, gravatar);
  return send(res, r.status, r.body, r.headers);
}

serve('lists-bare-server', handle, send);
