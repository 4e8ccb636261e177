'use strict';
/**
 * Baseline for bench/ci.bench.js: a bare `node:http` + `pg` handler for
 *   POST /ci/api/v1/builds/register(.json)
 * doing the same work as the app: JSON body, runner token → HMAC digest lookup, the throttled
 * `contacted_at` update, the same `FOR UPDATE SKIP LOCKED` claim statement with a fresh build token
 * (digest + encryption), then the build, its variables and its dependencies, and the same payload.
 * No framework, no ORM.
 *
 * Env: DATABASE_URL, PORT, HOST, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE (default 10).
 */
const http = require('node:http');
const { randomInt } = require('node:crypto');
const { bareSetup } = require('./bare-common');

const { PORT, HOST, EXTERNAL_URL, pool, digest, encrypt, decrypt } = bareSetup(8082);
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
  const { rows: runners } = await pool.query(
    'SELECT id, active, is_shared, run_untagged, tag_list FROM ci_runners WHERE token_digest = $1',
    [digest(String(body.token || ''))],
  );
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
    id: b.id, ref: b.ref, tag: b.tag, sha: b.sha, status: b.status, name: b.name, token, stage: b.stage,
    project_id: b.projectId, project_name: b.projectName, ...artifacts(b), commands: b.commands, repo_url: url.toString(),
    before_sha: b.beforeSha || '0000000000000000000000000000000000000000', allow_git_fetch: b.allowGitFetch,
    options: b.options || {}, timeout: b.buildTimeout, variables,
    depends_on_builds: deps.rows.map((d) => ({
      id: d.id, ref: d.ref, tag: d.tag, sha: d.sha, status: d.status, name: d.name,
      token: d.tokenEncrypted ? decrypt(d.tokenEncrypted) : '', stage: d.stage, project_id: d.projectId,
      project_name: d.projectName, ...artifacts(d),
    })),
  });
}

const server = http.createServer((req, res) => {
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
