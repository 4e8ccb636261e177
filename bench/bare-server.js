'use strict';
/**
 * Baseline for bench/users.bench.js: a bare `node:http` server answering
 *   GET /api/v3/user
 *   GET /api/v3/users?page=&per_page=
 * with the same work as the app: PRIVATE-TOKEN → HMAC digest lookup in `users`; the list's single
 * query (page, window count, identities and project counts as sub-selects); for /user the identities
 * and personal-project-count queries; token decryption; the full user view JSON and the
 * pagination headers; on a `pg` Pool of the app's size. No framework, no ORM.
 *
 * Env: DATABASE_URL, PORT, HOST, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE (default 10).
 */
const { createHash } = require('node:crypto');
const { bareSetup, pageRequest, paginationHeaders } = require('./bare-common');

const { EXTERNAL_URL, pool, digest, decrypt, gravatarEnabled, serve } = bareSetup(8081);

const USER_COLUMNS = `id, username, email, name, encrypted_password, state, admin, projects_limit, can_create_group,
  external, bio, location, skype, linkedin, twitter, website_url, theme_id, color_scheme_id, two_factor_enabled,
  confirmed_at, last_sign_in_at, current_sign_in_at, sign_in_count, private_token_digest, private_token_encrypted,
  created_at, updated_at`;

function avatarUrl(u, gravatar) {
  if (!gravatar) return null;
  const hash = createHash('md5').update(u.email.trim().toLowerCase()).digest('hex');
  return `https://www.gravatar.com/avatar/${hash}?s=80&d=identicon`;
}

/** Same fields, same order as presentUserFull in src/users/users.presenter.ts. */
function presentFull(u, identities, canCreateProject, gravatar) {
  return {
    name: u.name,
    username: u.username,
    id: u.id,
    state: u.state,
    avatar_url: avatarUrl(u, gravatar),
    web_url: `${EXTERNAL_URL}/u/${u.username}`,
    created_at: u.created_at,
    is_admin: u.admin,
    bio: u.bio,
    location: u.location,
    skype: u.skype,
    linkedin: u.linkedin,
    twitter: u.twitter,
    website_url: u.website_url,
    last_sign_in_at: u.last_sign_in_at,
    confirmed_at: u.confirmed_at,
    email: u.email,
    theme_id: u.theme_id,
    color_scheme_id: u.color_scheme_id,
    projects_limit: u.projects_limit,
    current_sign_in_at: u.current_sign_in_at,
    identities: identities.map((i) => ({ provider: i.provider, extern_uid: i.extern_uid })),
    can_create_group: u.can_create_group,
    can_create_project: canCreateProject,
    two_factor_enabled: u.two_factor_enabled,
    external: u.external,
  };
}

/**
 * What the full view needs besides the row, like UsersService.loadFullView: identities and the
 * number of personal projects, in one query (the same sub-selects as the app).
 */
async function loadFullView(userIds) {
  const identities = new Map();
  const projectCounts = new Map();
  if (userIds.length === 0) return { identities, projectCounts };
  const { rows } = await pool.query(
    `SELECT u.id,
       (SELECT coalesce(json_agg(json_build_object('id', i.id, 'provider', i.provider, 'extern_uid', i.extern_uid) ORDER BY i.id), '[]'::json)
          FROM identities i WHERE i.user_id = u.id) AS identities_json,
       (SELECT count(*)::int FROM projects p JOIN namespaces n ON n.id = p.namespace_id
          WHERE n.kind = 'user' AND n.owner_id = u.id) AS personal_project_count
       FROM users u WHERE u.id = ANY($1)`,
    [userIds],
  );
  for (const r of rows) {
    identities.set(r.id, r.identities_json);
    projectCounts.set(r.id, r.personal_project_count);
  }
  return { identities, projectCounts };
}

const fullView = (u, extra, gravatar) => presentFull(u, extra.identities.get(u.id) ?? [], u.projects_limit > (extra.projectCounts.get(u.id) ?? 0), gravatar);

async function authenticate(req, query) {
  const q = query.get('private_token');
  const h = req.headers['private-token'];
  const token = q !== null && q !== '' ? q : typeof h === 'string' && h !== '' ? h : undefined;
  if (!token || token.length > 255) return undefined;
  const { rows } = await pool.query(`SELECT ${USER_COLUMNS} FROM users WHERE private_token_digest = $1 LIMIT 1`, [digest(token)]);
  const user = rows[0];
  return user && user.state === 'active' ? user : undefined;
}

function send(res, status, body, headers = {}) {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(json),
  });
  res.end(json);
}

async function handle(req, res) {
  const qi = req.url.indexOf('?');
  const path = qi === -1 ? req.url : req.url.slice(0, qi);
  const query = new URLSearchParams(qi === -1 ? '' : req.url.slice(qi + 1));
  if (req.method !== 'GET') return send(res, 404, { message: '404 Not Found' });

  if (path === '/-/readiness') {
    await pool.query('SELECT 1');
    return send(res, 200, { status: 'ok', checks: { database: 'ok' } });
  }
  if (path !== '/api/v3/user' && path !== '/api/v3/users') return send(res, 404, { message: '404 Not Found' });

  const viewer = await authenticate(req, query);
  if (!viewer) return send(res, 401, { message: '401 Unauthorized' });
  const gravatar = await gravatarEnabled();

  if (path === '/api/v3/user') {
    const view = fullView(viewer, await loadFullView([viewer.id]), gravatar);
    view.private_token = decrypt(viewer.private_token_encrypted);
    return send(res, 200, view);
  }

  // /api/v3/users: the administrator's plain paginated listing (no username/search/state filters).
  if (!viewer.admin) return send(res, 403, { message: 'baseline serves the administrator view only' });
  const page = pageRequest(query);
  // The same single query as UsersService.list: page, window count, identities and project counts.
  const { rows: users } = await pool.query(
    `SELECT ${USER_COLUMNS.replace(/(^|\s|,)(\w)/g, '$1u.$2')},
       (SELECT coalesce(json_agg(json_build_object('id', i.id, 'provider', i.provider, 'extern_uid', i.extern_uid) ORDER BY i.id), '[]'::json)
          FROM identities i WHERE i.user_id = u.id) AS identities_json,
       (SELECT count(*)::int FROM projects p JOIN namespaces n ON n.id = p.namespace_id
          WHERE n.kind = 'user' AND n.owner_id = u.id) AS personal_project_count,
       count(*) OVER() AS total_count
       FROM users u ORDER BY u.id DESC LIMIT ${page.perPage} OFFSET ${page.offset}`,
  );
  let total = users.length ? Number(users[0].total_count) : 0;
  if (!users.length && page.offset > 0) total = Number((await pool.query('SELECT count(*)::int AS n FROM users')).rows[0].n);
  const body = users.map((u) => presentFull(u, u.identities_json, u.projects_limit > u.personal_project_count, gravatar));
  return send(res, 200, body, paginationHeaders(EXTERNAL_URL, path, query, total, page));
}

serve('bare-server', handle, send);
