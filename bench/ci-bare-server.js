'use strict';
/**
 * Baseline for bench/ci.bench.js: a bare `node:http` + `pg` handler for
 *   POST /ci/api/v1/builds/register(.json)
 * doing the same work as the app: JSON body, runner token → HMAC digest lookup, the throttled
 * `contacted_at` update, the same `FOR UPDATE SKIP LOCKED` claim statement with a fresh build token
 * (digest + encryption), then the build, its variables and its dependencies, and the same payload.
 * And for
 *   GET /api/v3/projects/:id/builds
 * the same work as the app: PRIVATE-TOKEN → digest lookup of the user, the project with the caller's
 * memberships and the read_build check, the same page query (window count), the users and runners
 * of the page in one query each, the commits read through a long-lived `git cat-file --batch` (as the
 * app's pool does), the same JSON and pagination headers.
 * No framework, no ORM.
 *
 * Env: DATABASE_URL, PORT, HOST, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE (default 10), DATA_DIR (the
 * app's, for the repositories).
 */
const http = require('node:http');
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const { createHash, randomInt } = require('node:crypto');
const { bareSetup, pageRequest, paginationHeaders } = require('./bare-common');

const { PORT, HOST, EXTERNAL_URL, pool, digest, encrypt, decrypt, gravatarEnabled } = bareSetup(8082);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function token20() {
  let s = '';
  for (let i = 0; i < 20; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

const SELECT_BUILD = `
  SELECT s.id, b.project_id AS "projectId", b.pipeline_id AS "pipelineId", s.sha, pl.before_sha AS "beforeSha",
         s.ref, b.tag, s.name, s.stage, b.stage_idx AS "stageIdx", s.status, b.commands, b.options,
         b.yaml_variables AS "yamlVariables", b.trigger_request_id AS "triggerRequestId", b.token_encrypted AS "tokenEncrypted",
         b.artifacts_file AS "artifactsFile", b.artifacts_size::float8 AS "artifactsSize",
         p.name AS "projectName", n.path || '/' || p.path AS "projectPath", p.build_timeout AS "buildTimeout",
         p.build_allow_git_fetch AS "allowGitFetch"
  FROM ci_builds b JOIN commit_statuses s ON s.id = b.id JOIN ci_pipelines pl ON pl.id = b.pipeline_id
  JOIN projects p ON p.id = b.project_id JOIN namespaces n ON n.id = p.namespace_id`;

const CLAIM = `WITH c AS (
    SELECT s.id FROM commit_statuses s JOIN ci_builds b ON b.id = s.id JOIN projects p ON p.id = b.project_id
    WHERE s.status = 'pending' AND b.runner_id IS NULL AND p.builds_enabled
      AND (CASE WHEN $2::boolean THEN p.shared_runners_enabled
           ELSE EXISTS (SELECT 1 FROM ci_runner_projects rp WHERE rp.runner_id = $1 AND rp.project_id = b.project_id) END)
      AND b.tag_list <@ $3::text[] AND ($4::boolean OR cardinality(b.tag_list) > 0)
    ORDER BY s.id LIMIT 1 FOR UPDATE OF s SKIP LOCKED),
  u AS (UPDATE commit_statuses s SET status = 'running', started_at = now(), updated_at = now() FROM c WHERE s.id = c.id RETURNING s.id)
  UPDATE ci_builds b SET runner_id = $1, token_digest = $5, token_encrypted = $6, trace_size = 0 FROM u WHERE b.id = u.id RETURNING b.id`;

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const artifacts = (b) => (b.artifactsFile ? { artifacts_file: { filename: b.artifactsFile, size: Number(b.artifactsSize) } } : {});

async function register(body, res) {
  const { rows: runners } = await pool.query('SELECT id, active, is_shared, run_untagged, tag_list FROM ci_runners WHERE token_digest = $1', [
    digest(String(body.token || '')),
  ]);
  const runner = runners[0];
  if (!runner) return send(res, 403, { message: '403 Forbidden' });
  const info = body.info || {};
  await pool.query(
    `UPDATE ci_runners SET contacted_at = now(),
       name = coalesce($2, name), version = coalesce($3, version), revision = coalesce($4, revision),
       platform = coalesce($5, platform), architecture = coalesce($6, architecture)
     WHERE id = $1 AND (contacted_at IS NULL OR contacted_at < now() - interval '60 seconds'
       OR name IS DISTINCT FROM coalesce($2, name) OR version IS DISTINCT FROM coalesce($3, version)
       OR revision IS DISTINCT FROM coalesce($4, revision) OR platform IS DISTINCT FROM coalesce($5, platform)
       OR architecture IS DISTINCT FROM coalesce($6, architecture))`,
    [runner.id, info.name ?? null, info.version ?? null, info.revision ?? null, info.platform ?? null, info.architecture ?? null],
  );
  if (!runner.active) return send(res, 404, {});
  const token = token20();
  const claimed = await pool.query(CLAIM, [runner.id, runner.is_shared, runner.tag_list, runner.run_untagged, digest(token), encrypt(token)]);
  if (claimed.rows.length === 0) return send(res, 404, {});
  const { rows } = await pool.query(`${SELECT_BUILD} WHERE b.id = $1`, [claimed.rows[0].id]);
  const b = rows[0];
  const [vars, deps] = await Promise.all([
    pool.query('SELECT key, value_encrypted FROM ci_variables WHERE project_id = $1 ORDER BY id', [b.projectId]),
    pool.query(
      `${SELECT_BUILD} WHERE b.pipeline_id = $1 AND b.stage_idx < $2
         AND s.id = (SELECT max(s2.id) FROM commit_statuses s2 WHERE s2.pipeline_id = $1 AND s2.name = s.name)
       ORDER BY b.stage_idx, s.id`,
      [b.pipelineId, b.stageIdx],
    ),
  ]);
  const variables = [];
  if (b.tag) variables.push({ key: 'CI_BUILD_TAG', value: b.ref, public: true });
  variables.push({ key: 'CI_BUILD_NAME', value: b.name, public: true }, { key: 'CI_BUILD_STAGE', value: b.stage, public: true });
  variables.push(...(b.yamlVariables || []));
  for (const v of vars.rows) variables.push({ key: v.key, value: decrypt(v.value_encrypted), public: false });
  const url = new URL(`${EXTERNAL_URL}/${b.projectPath}.git`);
  url.username = 'gitlab-ci-token';
  url.password = token;
  send(res, 201, {
    id: b.id,
    ref: b.ref,
    tag: b.tag,
    sha: b.sha,
    status: b.status,
    name: b.name,
    token,
    stage: b.stage,
    project_id: b.projectId,
    project_name: b.projectName,
    ...artifacts(b),
    commands: b.commands,
    repo_url: url.toString(),
    before_sha: b.beforeSha || '0000000000000000000000000000000000000000',
    allow_git_fetch: b.allowGitFetch,
    options: b.options || {},
    timeout: b.buildTimeout,
    variables,
    depends_on_builds: deps.rows.map((d) => ({
      id: d.id,
      ref: d.ref,
      tag: d.tag,
      sha: d.sha,
      status: d.status,
      name: d.name,
      token: d.tokenEncrypted ? decrypt(d.tokenEncrypted) : '',
      stage: d.stage,
      project_id: d.projectId,
      project_name: d.projectName,
      ...artifacts(d),
    })),
  });
}

// ------------------------------------------------------------------ GET /api/v3/projects/:id/builds

const DATA_DIR = process.env.DATA_DIR || '';
const USER_COLUMNS = `id, username, email, name, encrypted_password, state, admin, projects_limit, can_create_group,
  external, bio, location, skype, linkedin, twitter, website_url, theme_id, color_scheme_id, two_factor_enabled,
  confirmed_at, last_sign_in_at, current_sign_in_at, sign_in_count, private_token_digest, private_token_encrypted,
  created_at, updated_at`;

/** One `git cat-file --batch` per repository, requests answered in order (like src/git/cat-file-pool.ts). */
const catFiles = new Map();
function catFile(gitDir) {
  let cf = catFiles.get(gitDir);
  if (cf) return cf;
  const child = spawn('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = [];
  let buf = Buffer.alloc(0);
  child.stdout.on('data', (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl < 0 || !waiting.length) return;
      const header = buf.subarray(0, nl).toString('utf8').split(' ');
      if (header[1] === 'missing' || header.length < 3) {
        buf = buf.subarray(nl + 1);
        waiting.shift()(null);
        continue;
      }
      const size = Number(header[2]);
      if (buf.length < nl + 1 + size + 1) return;
      const data = Buffer.from(buf.subarray(nl + 1, nl + 1 + size));
      buf = buf.subarray(nl + 1 + size + 1);
      waiting.shift()({ sha: header[0], type: header[1], data });
    }
  });
  cf = (rev) =>
    new Promise((resolve) => {
      waiting.push(resolve);
      child.stdin.write(`${rev}\n`);
    });
  catFiles.set(gitDir, cf);
  return cf;
}
const repositoryPath = (projectId) => {
  const h = createHash('sha256').update(String(projectId)).digest('hex');
  return join(DATA_DIR, 'repositories', '@hashed', h.slice(0, 2), h.slice(2, 4), `${h}.git`);
};

function isoWithOffset(epoch, tz) {
  const m = /^([+-])(\d{2})(\d{2})$/.exec(tz) || ['', '+', '00', '00'];
  const offsetMin = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  return `${new Date((epoch + offsetMin * 60) * 1000).toISOString().replace('Z', '')}${m[1]}${m[2]}:${m[3]}`;
}
function signature(raw) {
  const m = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(raw);
  if (!m) return { name: raw, email: '', date: new Date(0).toISOString() };
  return { name: m[1], email: m[2], date: isoWithOffset(Number(m[3]), m[4]) };
}
function parseCommit(id, data) {
  const text = data.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = split === -1 ? text : text.slice(0, split);
  const c = { id, author: signature(''), committer: signature(''), message: split === -1 ? '' : text.slice(split + 2) };
  for (const line of headers.split('\n')) {
    if (line.startsWith(' ')) continue;
    const sp = line.indexOf(' ');
    if (line.slice(0, sp) === 'author') c.author = signature(line.slice(sp + 1));
    else if (line.slice(0, sp) === 'committer') c.committer = signature(line.slice(sp + 1));
  }
  return c;
}
function commitTitle(message) {
  const first = message.split('\n')[0].trim();
  if (!first) return '--no commit message';
  return first.length > 100 ? first.slice(0, 80) + '…' : first;
}

const COUNT_BUILDS = `SELECT count(*) FROM ci_builds cb WHERE cb.project_id = $1`;
const COUNT_BUILDS_WITH_STATUS = `SELECT count(*) FROM ci_builds cb JOIN commit_statuses cs ON cs.id = cb.id
  WHERE cb.project_id = $1 AND cs.status = ANY($2::varchar[])`;
const LIST_BUILDS = (withStatus) =>
  SELECT_BUILD_FULL().replace('SELECT s.id,', `SELECT (${withStatus ? COUNT_BUILDS_WITH_STATUS : COUNT_BUILDS}) AS total, s.id,`) +
  `
  WHERE b.project_id = $1 AND ($2::varchar[] IS NULL OR s.status = ANY($2::varchar[]))
  ORDER BY s.id DESC OFFSET $3 LIMIT $4`;
/** The app's SELECT_BUILD (src/ci/builds/builds.repository.ts), column for column. */
function SELECT_BUILD_FULL() {
  return `
  SELECT s.id, b.project_id AS "projectId", b.pipeline_id AS "pipelineId", pl.status AS "pipelineStatus", s.sha, pl.before_sha AS "beforeSha",
         s.ref, b.tag, s.name, s.stage, b.stage_idx AS "stageIdx", s.status, s.allow_failure AS "allowFailure",
         b.commands, b.options, b.yaml_variables AS "yamlVariables", b.tag_list AS "tagList", b."when",
         b.runner_id AS "runnerId", b.token_digest AS "tokenDigest", b.token_encrypted AS "tokenEncrypted",
         b.trigger_request_id AS "triggerRequestId", b.user_id AS "userId", b.coverage,
         b.trace_size::float8 AS "traceSize", b.artifacts_file AS "artifactsFile",
         b.artifacts_size::float8 AS "artifactsSize", b.artifacts_expire_at AS "artifactsExpireAt",
         b.erased_at AS "erasedAt", s.started_at AS "startedAt", s.finished_at AS "finishedAt", s.created_at AS "createdAt",
         p.name AS "projectName", n.path || '/' || p.path AS "projectPath",
         p.runners_token_digest AS "projectRunnersTokenDigest", p.build_timeout AS "buildTimeout",
         p.build_allow_git_fetch AS "allowGitFetch"
  FROM ci_builds b
  JOIN commit_statuses s ON s.id = b.id
  JOIN ci_pipelines pl ON pl.id = b.pipeline_id
  JOIN projects p ON p.id = b.project_id
  JOIN namespaces n ON n.id = p.namespace_id`;
}

const SCOPES = ['pending', 'running', 'failed', 'success', 'canceled', 'skipped'];

const iso = (d) => (d ? new Date(d).toISOString() : null);

async function listBuilds(req, res, path, projectId, query) {
  const q = query.get('private_token');
  const hdr = req.headers['private-token'];
  const token = q !== null && q !== '' ? q : typeof hdr === 'string' && hdr !== '' ? hdr : undefined;
  const viewer =
    token && token.length <= 255
      ? (await pool.query(`SELECT ${USER_COLUMNS} FROM users WHERE private_token_digest = $1 LIMIT 1`, [digest(token)])).rows[0]
      : undefined;
  if (!viewer || viewer.state !== 'active') return send(res, 401, { message: '401 Unauthorized' });
  // the project with the caller's memberships (one query, like ProjectResolver)
  const { rows: projects } = await pool.query(
    `SELECT p.id, p.visibility_level, p.builds_enabled, p.public_builds, n.kind, n.owner_id,
            pm.access_level AS pm_level, gm.access_level AS gm_level
     FROM projects p JOIN namespaces n ON n.id = p.namespace_id
     LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = $2
     LEFT JOIN group_members gm ON gm.namespace_id = p.namespace_id AND gm.user_id = $2
     WHERE p.id = $1`,
    [projectId, viewer.id],
  );
  const p = projects[0];
  const level = p ? Math.max(p.pm_level ?? 0, p.gm_level ?? 0, p.kind === 'user' && p.owner_id === viewer.id ? 50 : 0) : 0;
  const readsProject = p && (viewer.admin || level > 0 || p.visibility_level >= 10);
  if (!readsProject) return send(res, 404, { message: '404 Project Not Found' });
  const readsBuilds = p.builds_enabled && (viewer.admin || level >= 20 || (level === 0 && p.visibility_level >= 10 && p.public_builds));
  if (!readsBuilds) return send(res, 403, { message: '403 Forbidden' });
  const raw = query
    .getAll('scope')
    .concat(query.getAll('scope[]'))
    .filter((x) => x !== '');
  if (raw.some((x) => !SCOPES.includes(x))) return send(res, 400, { message: 'Scope contains invalid value(s)' });
  const page = pageRequest(query);
  const gravatar = await gravatarEnabled();
  const { rows } = await pool.query(LIST_BUILDS(raw.length > 0), [p.id, raw.length ? raw : null, page.offset, page.perPage]);
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && page.offset > 0) {
    total = Number(
      (
        await pool.query(
          `SELECT count(*) AS n FROM ci_builds b JOIN commit_statuses s ON s.id = b.id
       WHERE b.project_id = $1 AND ($2::varchar[] IS NULL OR s.status = ANY($2::varchar[]))`,
          [p.id, raw.length ? raw : null],
        )
      ).rows[0].n,
    );
  }
  const shas = [...new Set(rows.map((r) => r.sha))];
  const userIds = [...new Set(rows.map((r) => r.userId).filter((x) => x !== null))];
  const runnerIds = [...new Set(rows.map((r) => r.runnerId).filter((x) => x !== null))];
  const cat = catFile(repositoryPath(p.id));
  const [commits, users, runners] = await Promise.all([
    Promise.all(shas.map((s) => (/^[0-9a-f]{40}$/.test(s) ? cat(`${s}^{commit}`) : null))),
    userIds.length ? pool.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = ANY($1)`, [userIds]) : { rows: [] },
    runnerIds.length
      ? pool.query(`SELECT id, description, active, is_shared AS "isShared", name FROM ci_runners WHERE id = ANY($1::int[])`, [runnerIds])
      : { rows: [] },
  ]);
  const bySha = new Map();
  commits.forEach((o, i) => o && o.type === 'commit' && bySha.set(shas[i], parseCommit(o.sha, o.data)));
  const userById = new Map(users.rows.map((u) => [u.id, u]));
  const runnerById = new Map(runners.rows.map((r) => [r.id, r]));
  const body = rows.map((b) => {
    const u = b.userId !== null ? userById.get(b.userId) : undefined;
    const c = bySha.get(b.sha);
    const r = b.runnerId !== null ? runnerById.get(b.runnerId) : undefined;
    return {
      id: b.id,
      status: b.status,
      stage: b.stage,
      name: b.name,
      ref: b.ref,
      tag: b.tag,
      coverage: b.coverage,
      created_at: iso(b.createdAt),
      started_at: iso(b.startedAt),
      finished_at: iso(b.finishedAt),
      user: u
        ? {
            name: u.name,
            username: u.username,
            id: u.id,
            state: u.state,
            avatar_url: gravatar
              ? `https://www.gravatar.com/avatar/${createHash('md5').update(u.email.trim().toLowerCase()).digest('hex')}?s=80&d=identicon`
              : null,
            web_url: `${EXTERNAL_URL}/u/${u.username}`,
            created_at: u.created_at,
            is_admin: u.admin,
            bio: u.bio,
            location: u.location,
            skype: u.skype,
            linkedin: u.linkedin,
            twitter: u.twitter,
            website_url: u.website_url,
          }
        : null,
      // as the app: null without artifacts (spec: "null or object")
      artifacts_file: b.artifactsFile ? { filename: b.artifactsFile, size: Number(b.artifactsSize ?? 0) } : null,
      commit: c
        ? {
            id: c.id,
            short_id: c.id.slice(0, 8),
            title: commitTitle(c.message),
            author_name: c.author.name,
            author_email: c.author.email,
            created_at: c.committer.date,
            message: c.message,
          }
        : null,
      runner: r ? { id: r.id, description: r.description, active: r.active, is_shared: r.isShared, name: r.name } : null,
    };
  });
  const text = JSON.stringify(body);
  res.writeHead(200, {
    ...paginationHeaders(EXTERNAL_URL, path, query, total, page),
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const qi = req.url.indexOf('?');
  const rawPath = qi === -1 ? req.url : req.url.slice(0, qi);
  const builds = req.method === 'GET' && /^\/api\/v3\/projects\/(\d{1,9})\/builds$/.exec(rawPath);
  if (builds) {
    listBuilds(req, res, rawPath, Number(builds[1]), new URLSearchParams(qi === -1 ? '' : req.url.slice(qi + 1))).catch((e) => {
      process.stderr.write(`${e.stack}\n`);
      send(res, 500, { message: '500 Internal Server Error' });
    });
    return;
  }
  const path = req.url.split('?')[0].replace(/\.json$/, '');
  if (path === '/-/readiness') return send(res, 200, { status: 'ok' });
  if (req.method !== 'POST' || path !== '/ci/api/v1/builds/register') return send(res, 404, { message: '404 Not Found' });
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return send(res, 400, { message: '400 Bad request - malformed JSON body' });
    }
    register(body, res).catch((e) => {
      process.stderr.write(`${e.stack}\n`);
      send(res, 500, { message: '500 Internal Server Error' });
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, HOST);
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
