'use strict';
/**
 * LDAP benchmark (issue 25), against a real OpenLDAP slapd started here (Debian's `slapd`, as the
 * tests use) and a throw-away PostgreSQL database, with the built app in this process:
 *
 *   1. sign-in: POST /session with directory credentials (search + bind + account update), p50/p99,
 *      against the floor of the directory round trips alone (ldapts: connect, service bind, search,
 *      user bind, unbind) and, for reference, a local (bcrypt) sign-in;
 *   2. synchronisation of BENCH_LDAP_USERS (10,000) LDAP users, a tenth of whose entries are gone from
 *      the directory: time, SQL statements, and the heap's peak growth during the run (users are read
 *      500 at a time and looked up by DN, so the growth stays flat whatever the count); then a second,
 *      steady-state run (nothing to change).
 *
 *   npm run bench:ldap        (builds first when stale)
 *
 * Env: BENCH_PG_URL (server URL without database, default postgres://postgres@127.0.0.1:5432),
 * BENCH_LDAP_USERS (10000), BENCH_LDAP_SIGNINS (300), BENCH_DIST (the built app, default dist/).
 * Writes bench/results/ldap-latest.json.
 */
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client: PgClient } = require('pg');
const { Client: LdapClient } = require('ldapts');
const { insertUserNamespaces } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.resolve(ROOT, process.env.BENCH_DIST || 'dist');
const PG = (process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const USERS = Number(process.env.BENCH_LDAP_USERS || 10_000);
const SIGNINS = Number(process.env.BENCH_LDAP_SIGNINS || 300);
const GONE_EVERY = 10; // every tenth entry is missing from the directory
const BASE = 'dc=example,dc=org';
const ADMIN_DN = `cn=admin,${BASE}`;
const ADMIN_PW = 'bench-directory-admin';
const DB_NAME = `bench_ldap_${Date.now()}_${process.pid}`;
const RESULTS = path.join(__dirname, 'results');
const log = (m) => process.stderr.write(`[ldap-bench] ${m}\n`);

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const accepts = (port) =>
  new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const stats = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return { n: s.length, p50_ms: +pct(s, 50).toFixed(2), p99_ms: +pct(s, 99).toFixed(2), mean_ms: +(s.reduce((a, b) => a + b, 0) / s.length).toFixed(2) };
};

/** slapd (mdb) in a temp dir with `users` entries loaded by slapadd; bench_user_i, every GONE_EVERY-th left out. */
async function startSlapd(dir) {
  const slapd = ['/usr/sbin/slapd', '/usr/local/sbin/slapd'].find((p) => fs.existsSync(p));
  if (!slapd) throw new Error('slapd is not installed (apt-get install slapd ldap-utils)');
  const port = await freePort();
  fs.mkdirSync(path.join(dir, 'db'));
  fs.writeFileSync(
    path.join(dir, 'slapd.conf'),
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((n) => `include /etc/ldap/schema/${n}.schema`),
      `pidfile ${dir}/slapd.pid`,
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      'sizelimit unlimited',
      'database mdb',
      'maxsize 4294967296',
      `suffix "${BASE}"`,
      `rootdn "${ADMIN_DN}"`,
      `rootpw ${ADMIN_PW}`,
      `directory ${dir}/db`,
      'index objectClass eq',
      'index uid,mail eq',
      'access to attrs=userPassword by self write by anonymous auth by * none',
      'access to * by * read',
      '',
    ].join('\n'),
  );
  const ldif = fs.createWriteStream(path.join(dir, 'users.ldif'));
  ldif.write(
    `dn: ${BASE}\nobjectClass: dcObject\nobjectClass: organization\no: Bench\ndc: example\n\ndn: ou=people,${BASE}\nobjectClass: organizationalUnit\nou: people\n\n`,
  );
  ldif.write(
    `dn: uid=signin,ou=people,${BASE}\nobjectClass: inetOrgPerson\nuid: signin\ncn: Sign In\nsn: signin\nmail: signin@corp.example\nuserPassword: signin-password\n\n`,
  );
  for (let i = 1; i <= USERS; i++) {
    if (i % GONE_EVERY === 0) continue;
    ldif.write(
      `dn: uid=bench_user_${i},ou=people,${BASE}\nobjectClass: inetOrgPerson\nuid: bench_user_${i}\ncn: Bench User ${i}\nsn: u${i}\nmail: bench.user.${i}@corp.example\nuserPassword: pw-${i}\n\n`,
    );
  }
  await new Promise((r) => ldif.end(r));
  execFileSync(slapd.replace(/slapd$/, 'slapadd'), ['-q', '-f', path.join(dir, 'slapd.conf'), '-l', path.join(dir, 'users.ldif')], { stdio: 'pipe' });
  const proc = spawn(slapd, ['-h', `ldap://127.0.0.1:${port}/`, '-f', path.join(dir, 'slapd.conf'), '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const deadline = Date.now() + 20_000;
  while (!(await accepts(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error('slapd did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, url: `ldap://127.0.0.1:${port}` };
}

/** USERS LDAP users (users, personal namespaces, ldapmain identities) in three statements. */
async function seed(dbUrl) {
  const db = new PgClient({ connectionString: dbUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    const { rows } = await db.query(
      `INSERT INTO users (username, email, name, encrypted_password, state, admin, projects_limit, can_create_group,
                          external, skype, linkedin, twitter, website_url, theme_id, color_scheme_id,
                          two_factor_enabled, confirmed_at, sign_in_count, private_token_digest, private_token_encrypted)
       SELECT 'bench_user_' || i, 'bench.user.' || i || '@corp.example', 'Bench User ' || i, 'x', 'active', false, 10, true,
              false, '', '', '', '', 2, 1, false, now(), 0, md5('t' || i) || md5('u' || i), 'unused'
         FROM generate_series(1, $1::int) AS i
       RETURNING id, username`,
      [USERS],
    );
    const ids = rows.map((r) => r.id);
    const names = rows.map((r) => r.username);
    await insertUserNamespaces(db, ids, names);
    await db.query(
      `INSERT INTO identities (user_id, provider, extern_uid)
       SELECT id, 'ldapmain', 'uid=' || n || ',ou=people,${BASE}' FROM unnest($1::int[], $2::text[]) AS t(id, n)`,
      [ids, names],
    );
    await db.query('COMMIT');
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
}

async function main() {
  if (!fs.existsSync(path.join(DIST, 'app.factory.js'))) throw new Error(`${DIST}/app.factory.js missing: npm run build`);
  const { createApp } = require(path.join(DIST, 'app.factory.js'));
  const { loadConfig } = require(path.join(DIST, 'config', 'config.js'));
  const { LdapSyncService } = require(path.join(DIST, 'ldap', 'ldap-sync.service.js'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ldap-bench-'));
  const admin = new PgClient({ connectionString: `${PG}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  let slapd;
  let app;
  try {
    log(`slapd with ${USERS - Math.floor(USERS / GONE_EVERY)} of ${USERS} entries`);
    let t0 = Date.now();
    slapd = await startSlapd(tmp);
    log(`directory loaded and started in ${Date.now() - t0} ms`);
    const rootPassword = 'bench-root-password';
    const config = loadConfig({
      DATA_DIR: path.join(tmp, 'data'),
      DATABASE_URL: `${PG}/${DB_NAME}`,
      LOG_LEVEL: 'warn',
      SSH_ENABLED: 'false',
      ROOT_PASSWORD: rootPassword,
      SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789abcdef',
      QUEUE_WORKERS: 'false', // the sync is run below, not by the boot's periodic job
      LDAP_URL: slapd.url,
      LDAP_BASE: BASE,
      LDAP_BIND_DN: ADMIN_DN,
      LDAP_BIND_PASSWORD: ADMIN_PW,
    });
    app = await createApp(config);
    await app.app.listen(0, '127.0.0.1');
    const port = app.app.getHttpServer().address().port;
    const post = async (body) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v3/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };

    // ---------------------------------------------------------------- 1. sign-in
    await post({ login: 'signin', password: 'signin-password' }); // the first: creates the account
    const ldapMs = [];
    for (let i = 0; i < SIGNINS; i++) {
      const s = process.hrtime.bigint();
      await post({ login: 'signin', password: 'signin-password' });
      ldapMs.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    const floorMs = [];
    for (let i = 0; i < SIGNINS; i++) {
      const s = process.hrtime.bigint();
      const c = new LdapClient({ url: slapd.url, timeout: 10_000 });
      await c.bind(ADMIN_DN, ADMIN_PW);
      const r = await c.search(BASE, { scope: 'sub', filter: '(uid=signin)', attributes: ['uid', 'mail', 'cn'], sizeLimit: 2 });
      await c.bind(r.searchEntries[0].dn, 'signin-password');
      await c.unbind();
      floorMs.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    const localMs = [];
    for (let i = 0; i < Math.min(SIGNINS, 50); i++) {
      const s = process.hrtime.bigint();
      await post({ login: 'root', password: rootPassword });
      localMs.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    const signin = { ldap: stats(ldapMs), floor_directory_only: stats(floorMs), local_bcrypt: stats(localMs) };
    log(`sign-in: ${JSON.stringify(signin)}`);

    // ---------------------------------------------------------------- 2. synchronisation
    t0 = Date.now();
    await seed(`${PG}/${DB_NAME}`);
    log(`seeded ${USERS} LDAP users in ${Date.now() - t0} ms`);
    const sync = app.app.get(LdapSyncService);
    const runSync = async () => {
      if (global.gc) global.gc();
      const heap0 = process.memoryUsage().heapUsed;
      let peak = heap0;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
      const q0 = app.db.counter.count;
      const s = process.hrtime.bigint();
      const [r] = await sync.syncAll();
      const ms = Number(process.hrtime.bigint() - s) / 1e6;
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      return {
        ...r,
        seconds: +(ms / 1000).toFixed(2),
        users_per_s: Math.round((r.checked / ms) * 1000),
        statements: app.db.counter.count - q0,
        heap_peak_growth_mb: +((peak - heap0) / 1048576).toFixed(1),
      };
    };
    const first = await runSync();
    log(`sync (blocks the missing tenth): ${JSON.stringify(first)}`);
    const steady = await runSync();
    log(`sync (steady state): ${JSON.stringify(steady)}`);
    const blocked = Number((await app.db.dataSource.query(`SELECT count(*)::int AS n FROM users WHERE state = 'ldap_blocked'`))[0].n);
    const expected = Math.floor(USERS / GONE_EVERY);
    if (blocked !== expected || first.blocked !== expected || steady.blocked !== 0 || first.unavailable) {
      throw new Error(
        `sync result wrong: ${blocked} ldap_blocked (expected ${expected}), first run ${JSON.stringify(first)}, second ${JSON.stringify(steady)}`,
      );
    }

    const result = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      users: USERS,
      signins: SIGNINS,
      signin,
      sync: { first, steady },
    };
    fs.mkdirSync(RESULTS, { recursive: true });
    fs.writeFileSync(path.join(RESULTS, 'ldap-latest.json'), JSON.stringify(result, null, 2) + '\n');
    const rows = [
      `| LDAP sign-in (POST /session, search + bind + account) | p50 ${signin.ldap.p50_ms} ms | p50 ${signin.floor_directory_only.p50_ms} ms (directory round trips alone) | p99 ${signin.ldap.p99_ms} ms |`,
      `| local sign-in (bcrypt), for reference | p50 ${signin.local_bcrypt.p50_ms} ms | | p99 ${signin.local_bcrypt.p99_ms} ms |`,
      `| sync of ${USERS} LDAP users (${first.blocked} blocked) | ${first.seconds} s, ${first.statements} statements | | heap +${first.heap_peak_growth_mb} MB |`,
      `| sync of ${USERS} LDAP users, steady state | ${steady.seconds} s, ${steady.statements} statements | | heap +${steady.heap_peak_growth_mb} MB |`,
    ];
    process.stdout.write(`\n| operation | this server | floor | |\n|---|---|---|---|\n${rows.join('\n')}\n`);
  } finally {
    await app?.close().catch(() => undefined);
    if (slapd) {
      slapd.proc.kill('SIGTERM');
      await new Promise((r) => (slapd.proc.exitCode !== null ? r() : slapd.proc.once('exit', r)));
    }
    await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`FAILED: ${e.stack || e.message}`);
    process.exit(1);
  },
);
