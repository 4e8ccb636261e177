'use strict';
/**
 * What every benchmark needs around its measurements: child processes (the app, baselines) that are
 * stopped on every exit path, a throw-away PostgreSQL database that is dropped, temp folders that are
 * removed, free ports, and a readiness wait.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');

const ROOT = path.resolve(__dirname, '..');
const PG_URL = (process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const CLK_TCK = 100; // USER_HZ on Linux

/** utime + stime of a process, in ms (0 when it is gone). */
function cpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** Resident memory of a process (MB; 0 when it is gone). */
function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The live child processes of a process (from each of its threads' `children`; none when it is gone). */
function childPids(pid) {
  const out = [];
  let tasks;
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    try {
      for (const k of fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/)) if (k) out.push(Number(k));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Resident memory of a process and all its descendants (MB): a server and the processes it spawned. */
function treeRssMb(pid) {
  return childPids(pid).reduce((total, k) => total + treeRssMb(k), rssMb(pid));
}

function createHarness(label) {
  const log = (msg) => process.stderr.write(`[${label}] ${msg}\n`);
  const children = new Set();
  const tempDirs = [];
  const beforeCleanup = [];
  let database; // name of the database to drop
  let running; // the autocannon instance under way, stopped first at cleanup
  beforeCleanup.push(() => {
    if (running) running.stop();
    running = undefined;
  });

  function killChildren() {
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null) {
        try {
          c.kill('SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
  }

  async function stopChild(child) {
    child.stopping = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }

  /** Runs the registered hooks, stops the children, drops the database, removes the temp folders. */
  async function cleanup() {
    for (const fn of beforeCleanup.splice(0))
      await Promise.resolve()
        .then(fn)
        .catch(() => undefined);
    await Promise.all([...children].map((c) => stopChild(c).catch(() => undefined)));
    if (database) {
      const admin = new Client({ connectionString: `${PG_URL}/postgres` });
      try {
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
        log(`dropped database ${database}`);
        database = undefined;
      } catch (e) {
        log(`could not drop database ${database}: ${e.message}`);
      } finally {
        await admin.end().catch(() => undefined);
      }
    }
    for (const d of tempDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  }

  process.on('exit', () => {
    killChildren();
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      log(`${sig}: cleaning up`);
      for (const c of children) c.stopping = true;
      cleanup().finally(() => process.exit(130));
    });
  }
  for (const event of ['uncaughtException', 'unhandledRejection']) {
    process.on(event, (e) => {
      log(`${event}: ${e && e.stack ? e.stack : e}`);
      for (const c of children) c.stopping = true;
      cleanup().finally(() => process.exit(1));
    });
  }

  const harness = {
    log,
    sleep,
    ROOT,
    PG_URL,
    children,
    cpuMs,

    /** One autocannon run (stopped at cleanup when still under way): its result. */
    cannon(opts) {
      const autocannon = require('autocannon');
      return new Promise((resolve, reject) => {
        const inst = autocannon(opts, (err, res) => {
          running = undefined;
          if (err) reject(err);
          else resolve(res);
        });
        running = inst;
        inst.on('error', reject);
      });
    },

    /** Registers work to do first at cleanup (stop a load generator, close a monitor connection). */
    onCleanup: (fn) => beforeCleanup.push(fn),

    tempDir(prefix) {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      tempDirs.push(d);
      return d;
    },

    /** Creates the database `name` (dropped at cleanup) and returns its URL. */
    async createDatabase(name) {
      const admin = new Client({ connectionString: `${PG_URL}/postgres` });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${name}"`);
        database = name;
      } finally {
        await admin.end();
      }
      log(`database ${name}`);
      return `${PG_URL}/${name}`;
    },

    freePort() {
      return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.unref();
        s.on('error', reject);
        s.listen(0, '127.0.0.1', () => {
          const { port } = s.address();
          s.close(() => resolve(port));
        });
      });
    },

    /** Starts `node <args>` in the project folder; keeps the last 4 KB of its output for error messages. */
    startProcess(name, args, env) {
      const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.add(child);
      let tail = '';
      const keep = (chunk) => {
        tail = (tail + chunk.toString()).slice(-4000);
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.on('exit', (code, signal) => {
        if (!child.stopping) log(`${name} exited (code ${code}, signal ${signal})\n${tail}`);
      });
      child.tail = () => tail;
      child.label = name;
      return child;
    },

    /** Waits for `GET <base>/-/readiness` to answer 200. */
    async waitReady(child, base, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`${child.label} exited during start:\n${child.tail()}`);
        try {
          const r = await fetch(`${base}/-/readiness`);
          if (r.status === 200) return;
        } catch {
          /* not listening yet */
        }
        await sleep(100);
      }
      throw new Error(`${child.label} not ready after ${timeoutMs} ms:\n${child.tail()}`);
    },

    /**
     * Starts the app (`node <args>`, e.g. `[...profileArgs, 'dist/main.js']`) on 127.0.0.1 at `port`
     * (a free one unless given) with LOG_LEVEL error and `env` (DATABASE_URL, DATA_DIR, SECRET_KEY,
     * ROOT_PASSWORD, ...), and waits until it is ready. Returns `{ name, child, port, base }`.
     */
    async startApp(name, args, env, { port, timeoutMs } = {}) {
      const appPort = port ?? (await harness.freePort());
      const base = `http://127.0.0.1:${appPort}`;
      const child = harness.startProcess(name, args, { HOST: '127.0.0.1', PORT: String(appPort), LOG_LEVEL: 'error', ...env });
      await harness.waitReady(child, base, timeoutMs);
      return { name, child, port: appPort, base };
    },

    /**
     * The benchmark's database: BENCH_DATABASE_URL emptied (its public and pgboss schemas dropped) when
     * it is set, or else a new database `<prefix>_<time>_<pid>` (dropped at cleanup). Returns its URL.
     */
    async benchDatabase(prefix) {
      const url = process.env.BENCH_DATABASE_URL;
      if (!url) return harness.createDatabase(`${prefix}_${Date.now()}_${process.pid}`);
      const c = new Client({ connectionString: url });
      await c.connect();
      await c.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; DROP SCHEMA IF EXISTS pgboss CASCADE;');
      await c.end();
      return url;
    },

    /** Runs `main`, then cleans up and exits 0, or logs the failure, cleans up and exits 1. */
    run(main) {
      main()
        .then(async () => {
          await cleanup();
          process.exit(0);
        })
        .catch(async (e) => {
          log(`FAILED: ${e && e.stack ? e.stack : e}`);
          for (const c of children) c.stopping = true;
          await cleanup();
          process.exit(1);
        });
    },
  };
  return harness;
}

/**
 * `api(method, url, body, token)` against the app at `base`: the JSON answer of `/api/v3<url>`, or an
 * error naming the status and body when it is not a success.
 */
function apiClient(base) {
  return async (method, url, body, token) => {
    const r = await fetch(`${base}/api/v3${url}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { 'PRIVATE-TOKEN': token } : {}) },
      body: body && JSON.stringify(body),
    });
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
    return r.json();
  };
}

/** root's private token (POST /session with `password`). */
async function rootToken(base, password) {
  return (await apiClient(base)('POST', '/session', { login: 'root', password })).private_token;
}

/** A user namespace for each of the seeded users (`ids[i]` named `names[i]`), as the app gives one to every user. */
async function insertUserNamespaces(db, ids, names) {
  await db.query(
    `INSERT INTO namespaces (name, path, kind, owner_id, description, visibility_level)
     SELECT n, n, 'user', id, '', 20 FROM unnest($1::int[], $2::text[]) AS t(id, n)`,
    [ids, names],
  );
}

/** Samples the peak RSS of `pid` (own, and with its children such as git) while `work` runs. */
async function peakDuring(pid, work) {
  let own = rssMb(pid);
  let tree = treeRssMb(pid);
  const timer = setInterval(() => {
    own = Math.max(own, rssMb(pid));
    tree = Math.max(tree, treeRssMb(pid));
  }, 50);
  const t0 = process.hrtime.bigint();
  let result;
  try {
    result = await work();
  } finally {
    clearInterval(timer);
  }
  return {
    result,
    seconds: Math.round((Number(process.hrtime.bigint() - t0) / 1e9) * 100) / 100,
    peak_rss_mb: Math.round(own),
    peak_tree_rss_mb: Math.round(tree),
  };
}

/**
 * The stock OpenSSH client set up against the app's SSH server on `sshPort`: a new Ed25519 key in
 * `work`, added to the account of `token` through `api(method, url, body, token)`, and a known_hosts
 * file holding the server's host key (StrictHostKeyChecking=yes). Returns the `ssh` arguments and the
 * `GIT_SSH_COMMAND` that use them.
 */
async function sshClient({ api, token, sshPort, work }) {
  const key = path.join(work, 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  await api('POST', '/user/keys', { title: 'bench', key: fs.readFileSync(`${key}.pub`, 'utf8') }, token);
  const hostKey = execFileSync('ssh-keyscan', ['-p', String(sshPort), '-t', 'ed25519', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'ignore'] })
    .toString()
    .trim();
  const knownHosts = path.join(work, 'known_hosts');
  fs.writeFileSync(knownHosts, hostKey + '\n');
  const sshArgs = [
    '-F',
    '/dev/null',
    '-i',
    key,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'BatchMode=yes',
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-p',
    String(sshPort),
  ];
  return { sshArgs, gitSshCommand: ['ssh', ...sshArgs].map((a) => `'${a}'`).join(' ') };
}

module.exports = { createHarness, cpuMs, CLK_TCK, rssMb, treeRssMb, childPids, peakDuring, sshClient, apiClient, rootToken, insertUserNamespaces };
