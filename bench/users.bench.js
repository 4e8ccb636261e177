'use strict';
/**
 * Users API benchmark: the built app (dist/main.js) against a bare node:http baseline
 * (bench/bare-server.js) doing the same work, on a throw-away PostgreSQL database.
 *
 *   npm run bench          (builds first)
 *
 * Env (all optional): BENCH_PG_URL (server URL without database, default postgres://postgres@127.0.0.1:5432),
 * BENCH_USERS (1000), BENCH_CONNECTIONS (32), BENCH_DURATION or BENCH_SECONDS (10 s), BENCH_WARMUP (3 s), DB_POOL_SIZE (10),
 * BENCH_APP_MAIN (the app's entry point, default dist/main.js: e.g. a copy of dist built from another revision),
 * BENCH_ONLY=<substring of the path> (e.g. `users?`: run only the matching endpoints),
 * BENCH_PROFILE=1 (runs both servers with --cpu-prof; .cpuprofile files written to bench/results/).
 *
 * Prints a markdown table and writes bench/results/users-latest.json. Exits non-zero on any error,
 * non-2xx response, or response mismatch between the two servers.
 */
const { createCipheriv, createHmac, hkdfSync, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const bcrypt = require('bcryptjs');
const { Client } = require('pg');

const { createHarness, insertUserNamespaces } = require('./harness');
const { createApiBench } = require('./api-bench');

const ROOT = path.resolve(__dirname, '..');
const USERS = Number(process.env.BENCH_USERS || 1000);
const POOL_SIZE = Number(process.env.DB_POOL_SIZE || 10);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const EXTERNAL_URL = 'http://gitlab.bench.example';
const DB_NAME = `bench_${Date.now()}_${process.pid}`;

const ENDPOINTS = [
  { name: 'GET /api/v3/user', path: '/api/v3/user' },
  { name: 'GET /api/v3/users?per_page=100', path: '/api/v3/users?per_page=100' },
].filter((ep) => !process.env.BENCH_ONLY || ep.path.includes(process.env.BENCH_ONLY));

const h = createHarness('bench');
const { log } = h;
const { CONNECTIONS, DURATION, WARMUP, RESULTS_DIR, checkSameResponses, runAndReport, startMeasuredApp, startBare } = createApiBench(h);

// ---------------------------------------------------------------------------------------------
/** 1,000 users (+ namespaces, an identity for every third one, a project for every fifth) in a few statements. */
async function seed(dbUrl) {
  const secret = Buffer.from(SECRET_KEY, 'utf8');
  const digestKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-digest', 32));
  const encKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-encryption', 32));
  const encrypt = (plain) => {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', encKey, iv);
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  };
  const passwordHash = bcrypt.hashSync('bench-user-password', 10);
  const cols = { username: [], email: [], name: [], digest: [], enc: [], bio: [], location: [] };
  for (let i = 1; i <= USERS; i++) {
    const token = randomBytes(15).toString('base64url');
    cols.username.push(`bench_user_${i}`);
    cols.email.push(`bench.user.${i}@example.com`);
    cols.name.push(`Bench User ${i}`);
    cols.digest.push(createHmac('sha256', digestKey).update(token, 'utf8').digest('hex'));
    cols.enc.push(encrypt(token));
    cols.bio.push(i % 2 ? `Bio of user ${i}` : null);
    cols.location.push(i % 3 ? null : 'Earth');
  }
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    const { rows } = await db.query(
      `INSERT INTO users (username, email, name, encrypted_password, state, admin, projects_limit, can_create_group,
                          external, bio, location, skype, linkedin, twitter, website_url, theme_id, color_scheme_id,
                          two_factor_enabled, confirmed_at, sign_in_count, private_token_digest, private_token_encrypted)
       SELECT u.username, u.email, u.name, $1, 'active', false, 10, true, false, u.bio, u.location, '', '', '', '',
              2, 1, false, now(), 0, u.digest, u.enc
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
              AS u(username, email, name, digest, enc, bio, location)
       RETURNING id, username`,
      [passwordHash, cols.username, cols.email, cols.name, cols.digest, cols.enc, cols.bio, cols.location],
    );
    const ids = rows.map((r) => r.id);
    const names = rows.map((r) => r.username);
    await insertUserNamespaces(db, ids, names);
    await db.query(
      `INSERT INTO identities (user_id, provider, extern_uid)
       SELECT id, 'ldapmain', 'uid=' || n || ',ou=people,dc=example,dc=com'
         FROM unnest($1::int[], $2::text[]) AS t(id, n) WHERE id % 3 = 0`,
      [ids, names],
    );
    // One personal project for every fifth user, and a limit of 1 for every tenth, so that
    // can_create_project (projects_limit > personal projects) varies across the page.
    const hasProjects = (await db.query(`SELECT to_regclass('public.projects') IS NOT NULL AS ok`)).rows[0].ok;
    if (hasProjects) {
      await db.query('SAVEPOINT projects');
      try {
        await db.query(
          `INSERT INTO projects (name, path, namespace_id, creator_id, runners_token_digest, runners_token_encrypted)
           SELECT 'bench-project', 'bench-project', n.id, n.owner_id, md5(n.id::text) || md5('p' || n.id), 'unused'
             FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ANY($1::int[]) AND n.owner_id % 5 = 0`,
          [ids],
        );
        await db.query('UPDATE users SET projects_limit = 1 WHERE id = ANY($1::int[]) AND id % 10 = 0', [ids]);
      } catch (e) {
        // The projects schema belongs to another area and may change: say so, keep benchmarking users.
        await db.query('ROLLBACK TO SAVEPOINT projects');
        log(`WARNING: could not seed projects (${e.message}); every can_create_project will be true`);
      }
    }
    await db.query('COMMIT');
    await db.query('ANALYZE');
    const counts = await db.query(
      `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM namespaces)::int AS namespaces,
              (SELECT count(*) FROM identities)::int AS identities` + (hasProjects ? ', (SELECT count(*) FROM projects)::int AS projects' : ''),
    );
    return counts.rows[0];
  } catch (e) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------
async function main() {
  if (ENDPOINTS.length === 0) throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} matches no endpoint`);
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} not found: run \`npm run build\` (npm run bench does)`);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const dataDir = h.tempDir('gitlab-bench-');
  const dbUrl = await h.createDatabase(DB_NAME);

  // migrations ran, root exists
  const env = { DATABASE_URL: dbUrl, DATA_DIR: dataDir, SECRET_KEY, ROOT_PASSWORD, EXTERNAL_URL, DB_POOL_SIZE: String(POOL_SIZE) };
  const app = await startMeasuredApp(mainJs, env);

  const signIn = await fetch(`${app.base}/api/v3/session`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login: 'root', password: ROOT_PASSWORD }),
  });
  const session = await signIn.json();
  if (signIn.status !== 201 && signIn.status !== 200) throw new Error(`sign-in failed: ${signIn.status} ${JSON.stringify(session)}`);
  const token = session.private_token;
  if (!token || !session.is_admin) throw new Error('sign-in did not return an administrator private token');

  const t0 = Date.now();
  const counts = await seed(dbUrl);
  log(`seeded in ${Date.now() - t0} ms: ${JSON.stringify(counts)}`);

  const bare = await startBare('bare-server.js', { DATABASE_URL: dbUrl, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE: String(POOL_SIZE) });

  await checkSameResponses(app.base, bare.base, ENDPOINTS, token);

  await runAndReport({
    app,
    bare,
    endpoints: ENDPOINTS,
    token,
    dbUrl,
    title:
      `Users API benchmark — ${USERS} seeded users, ${CONNECTIONS} connections, ${DURATION} s per run ` +
      `(after ${WARMUP} s warm-up), pool ${POOL_SIZE}, node ${process.version}, ${os.cpus().length} CPUs`,
    file: 'users-latest.json',
    extra: { users_seeded: counts.users, seeded: counts, db_pool_size: POOL_SIZE },
  });
}

h.run(main);
