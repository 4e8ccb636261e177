'use strict';
/**
 * `npm run bench`: every benchmark, one after the other, then one table — route or operation, this
 * server, the floor it is compared with, the ratio, p99 and resident memory — written to the console
 * and to bench/results/all-latest.md. Each benchmark also prints its own detailed table.
 *
 * Env: BENCH_SKIP=<comma list of names> (users,lists,ci,git,hooks,email,data,transfer,ssh,embedded,scale,ldap) skips some;
 * BENCH_ONLY_SUITES=<comma list> runs only those. Every benchmark's own env applies (see its header).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const RESULTS = path.join(__dirname, 'results');
const read = (f) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(RESULTS, f), 'utf8'));
  } catch {
    return undefined;
  }
};
const n = (x, d = 2) => (x === undefined || x === null || Number.isNaN(x) ? '—' : Number(x).toFixed(d));

/** Each suite: its script, its results file, and the rows it contributes to the table. */
const SUITES = [
  {
    name: 'users',
    script: 'users.bench.js',
    file: 'users-latest.json',
    rows: (r) =>
      [...new Set(r.results.map((x) => x.endpoint))].map((ep) => {
        const a = r.results.find((x) => x.endpoint === ep && x.server === 'app');
        const b = r.results.find((x) => x.endpoint === ep && x.server === 'bare');
        return [
          ep,
          `${n(a.req_per_s, 0)} req/s`,
          `${n(b.req_per_s, 0)} req/s (bare node:http + pg)`,
          a.req_per_s / b.req_per_s,
          `${a.latency_p99_ms} ms`,
          a.peak_rss_mb,
        ];
      }),
  },
  {
    name: 'lists',
    script: 'lists.bench.js',
    file: 'lists-latest.json',
    rows: (r) =>
      [...new Set(r.results.map((x) => x.endpoint))].map((ep) => {
        const a = r.results.find((x) => x.endpoint === ep && x.server === 'app');
        const b = r.results.find((x) => x.endpoint === ep && x.server === 'bare');
        return [
          ep,
          `${n(a.req_per_s, 0)} req/s`,
          `${n(b.req_per_s, 0)} req/s (bare node:http + pg, same SQL)`,
          a.req_per_s / b.req_per_s,
          `${a.latency_p99_ms} ms`,
          a.peak_rss_mb,
        ];
      }),
  },
  {
    name: 'ci',
    script: 'ci.bench.js',
    file: 'ci-latest.json',
    rows: (r) => {
      const out = [];
      if (r.poll)
        out.push([
          'POST /ci/api/v1/builds/register (empty queue)',
          `${n(r.poll.app.req_per_s, 0)} req/s`,
          `${n(r.poll.bare.req_per_s, 0)} req/s (bare)`,
          r.poll.app.req_per_s / r.poll.bare.req_per_s,
          `${r.poll.app.p99_ms} ms`,
        ]);
      if (r.paced)
        out.push([
          `${r.paced.runners} runners polling at 1/s: server CPU of one core`,
          `${r.paced.cpu_percent_of_one_core} %`,
          `${r.paced.bare_cpu_percent_of_one_core} % (bare; aim < 5 %)`,
          r.paced.bare_cpu_percent_of_one_core / Math.max(r.paced.cpu_percent_of_one_core, 0.01),
          '',
        ]);
      if (r.bigtrace)
        out.push([
          '10 MB trace in 100 PATCHes: last 10 parts vs first 10',
          `${r.bigtrace.last10_ms} ms/part`,
          `${r.bigtrace.first10_ms} ms/part`,
          r.bigtrace.first10_ms / r.bigtrace.last10_ms,
          '',
        ]);
      if (r.drain)
        out.push([
          `claim ${r.builds} builds with ${r.runners} runners`,
          `${r.drain.app.seconds} s (${r.drain.app.double_claims} double)`,
          `${r.drain.bare.seconds} s (bare)`,
          r.drain.bare.seconds / r.drain.app.seconds,
          '',
        ]);
      if (r.list)
        out.push([
          `GET /projects/:id/builds?per_page=100 (${r.list.builds} builds)`,
          `${n(r.list.app.req_per_s, 0)} req/s`,
          `${n(r.list.bare.req_per_s, 0)} req/s (bare)`,
          r.list.app.req_per_s / r.list.bare.req_per_s,
          `${r.list.app.p99_ms} ms`,
        ]);
      if (r.follow) out.push(['live trace: PATCH → SSE follower latency', `p50 ${r.follow.app.p50_ms} ms`, '', undefined, `${r.follow.app.p99_ms} ms`]);
      if (r.trace) out.push(['trace PATCH 4 KB parts', `${r.trace.app.parts_per_s} parts/s`, '', undefined, '']);
      return out;
    },
  },
  {
    name: 'git',
    script: 'git.bench.js',
    file: 'git-latest.json',
    rows: (r) => {
      const out = r.results.map((x) => [
        `git: ${x.operation}`,
        `${n(x.api.median_ms)} ms`,
        `${n(x.git.median_ms)} ms (git CLI)`,
        x.git.median_ms / x.api.median_ms,
        `${n(x.api.p95_ms)} ms (p95)`,
      ]);
      if (r.clone)
        out.push([
          'git: clone over HTTP',
          `${n(r.clone.http.median_ms, 0)} ms`,
          `${n(r.clone.local.median_ms, 0)} ms (local clone)`,
          r.clone.ratio_local_over_http,
          '',
        ]);
      return out;
    },
  },
  {
    name: 'hooks',
    script: 'hooks.bench.js',
    file: 'hooks-latest.json',
    rows: (r) => [
      [
        'push with 10 hooks at a 2 s receiver',
        `${n(r.pushMedianMs10SlowHooks, 0)} ms`,
        `${n(r.pushMedianMsNoHooks, 0)} ms (no hooks)`,
        r.pushMedianMsNoHooks / r.pushMedianMs10SlowHooks,
        '',
      ],
      ['hook deliveries to a fast receiver', `${n(r.perSecond, 0)} /s`, '', undefined, ''],
    ],
  },
  {
    name: 'email',
    script: 'email.bench.js',
    file: 'email-latest.json',
    rows: (r) => [
      [
        `POST note on an issue with ${r.subscribers} subscribers: notifications on (earlier mails sent)`,
        `${n(r.noteMedianMsOn, 1)} ms`,
        `${n(r.noteMedianMsOff, 1)} ms (off; aim ratio <= 1.1)`,
        r.noteMedianMsOff / r.noteMedianMsOn,
        '',
      ],
      [`POST note: app CPU per request, notifications on`, `${n(r.noteCpuMsOn, 1)} ms`, `${n(r.noteCpuMsOff, 1)} ms (off)`, r.noteCpuMsOff / r.noteCpuMsOn, ''],
      [
        `POST note back to back, while earlier comments' mails are sent`,
        `${n(r.noteMedianMsOnUnderFanout, 1)} ms`,
        `${n(r.noteMedianMsOffBackToBack, 1)} ms (off)`,
        r.noteMedianMsOffBackToBack / r.noteMedianMsOnUnderFanout,
        '',
      ],
      [
        `one comment: until the ${r.subscribers}th mail is accepted (local SMTP)`,
        `${n(r.secondsToLastMail, 2)} s`,
        `app CPU ${n(r.fanoutAppCpuMs / r.subscribers, 1)} ms a mail`,
        undefined,
        '',
      ],
    ],
  },
  {
    name: 'data',
    script: 'data-scale.bench.js',
    file: 'data-scale-latest.json',
    rows: (rows) =>
      rows.map((x) => [
        `large set: ${x.route.name}`,
        `${n(x.large.p50)} ms`,
        x.git ? `${n(x.git.p50)} ms (git CLI)` : `${n(x.small.p50)} ms (small set)`,
        x.git ? x.git.p50 / x.large.p50 : x.small.p50 / x.large.p50,
        `${n(x.large.p99)} ms`,
      ]),
  },
  {
    name: 'transfer',
    script: 'git-transfer.bench.js',
    file: 'transfer-latest.json',
    rows: (r) => [
      [`push ${r.size_mb} MB over HTTP`, `${r.push.seconds} s`, '', undefined, '', r.push.peak_rss_mb],
      [`clone ${r.size_mb} MB over HTTP`, `${r.clone.seconds} s`, `${r.local_clone_seconds} s (local clone)`, r.clone_vs_local, '', r.clone.peak_rss_mb],
      ['slow client: busy DB backends', `${r.slow_client.busy_db_backends_max}`, '0', undefined, ''],
    ],
  },
  {
    name: 'ssh',
    script: 'ssh.bench.js',
    file: 'ssh-latest.json',
    rows: (r) => [
      [`clone ${r.clone_mb} MB over SSH`, `${r.clone_seconds.ssh} s`, `${r.clone_seconds.local} s (local clone)`, r.ssh_vs_local, ''],
      [`clone ${r.clone_mb} MB over HTTP`, `${r.clone_seconds.http} s`, `${r.clone_seconds.local} s (local clone)`, r.http_vs_local, ''],
      [
        `${r.concurrent.clients} concurrent SSH clones (all ok)`,
        `${r.concurrent.clones_ok}/${r.concurrent.clients}`,
        '',
        undefined,
        `${r.concurrent.clone_max_s} s (slowest)`,
      ],
      [`SSH set-up, ${r.concurrent.clients} at once`, `${r.concurrent.setup_p50_ms} ms`, '', undefined, `${r.concurrent.setup_p99_ms} ms`],
      ...(r.big
        ? ['push', 'clone'].map((op) => [
            `${op} ${r.big.size_mb} MB over SSH (aim RSS < 300 MB)`,
            `${r.big[op].seconds} s`,
            '300 MB',
            300 / r.big[op].peak_rss_mb,
            '',
            r.big[op].peak_rss_mb,
          ])
        : []),
    ],
  },
  {
    name: 'embedded',
    script: 'embedded.bench.js',
    file: 'embedded-latest.json',
    rows: (r) => [
      ['embedded: first start → ready (aim ≤ 5 s)', `${r.first_start_ms} ms`, '5000 ms', 5000 / r.first_start_ms, ''],
      ['embedded: restart → ready (aim ≤ 2 s)', `${r.restart_ready_ms} ms`, '2000 ms', 2000 / r.restart_ready_ms, ''],
      ['embedded: idle after restart (aim ≤ 250 MB)', `${r.idle_after_restart_mb} MB`, '250 MB', 250 / r.idle_after_restart_mb, '', r.idle_after_restart_mb],
      [
        'embedded: issues list vs PostgreSQL mode (aim ≥ 0.6×)',
        `${n(r.embedded.req_per_s, 0)} req/s`,
        `${n(r.postgresql.req_per_s, 0)} req/s (PostgreSQL mode)`,
        r.ratio,
        `${r.embedded.p99_ms} ms`,
        r.embedded.peak_rss_mb,
      ],
      ['PostgreSQL mode: idle (aim ≤ 150 MB)', `${r.pg_idle_mb} MB`, '150 MB', 150 / r.pg_idle_mb, '', r.pg_idle_mb],
    ],
  },
  {
    name: 'scale',
    script: 'scale.bench.js',
    file: 'scale-latest.json',
    optional: true,
    rows: (r) => (Array.isArray(r.rows) ? r.rows.map((x) => [x.name, x.value, x.floor || '', x.ratio, x.p99 || '', x.rss]) : []),
  },
  {
    name: 'ldap',
    script: 'ldap.bench.js',
    file: 'ldap-latest.json',
    rows: (r) => [
      [
        'LDAP sign-in (POST /session against a local slapd)',
        `p50 ${n(r.signin.ldap.p50_ms)} ms`,
        `p50 ${n(r.signin.floor_directory_only.p50_ms)} ms (directory round trips alone)`,
        r.signin.floor_directory_only.p50_ms / r.signin.ldap.p50_ms,
        `${n(r.signin.ldap.p99_ms)} ms`,
      ],
      [
        `LDAP sync of ${r.users} users (${r.sync.first.blocked} blocked)`,
        `${n(r.sync.first.seconds)} s, ${r.sync.first.statements} statements`,
        `heap +${r.sync.first.heap_peak_growth_mb} MB at peak`,
        undefined,
        '',
      ],
      [
        `LDAP sync of ${r.users} users, steady state`,
        `${n(r.sync.steady.seconds)} s, ${r.sync.steady.statements} statements`,
        `heap +${r.sync.steady.heap_peak_growth_mb} MB at peak`,
        undefined,
        '',
      ],
    ],
  },
];

const only = process.env.BENCH_ONLY_SUITES ? process.env.BENCH_ONLY_SUITES.split(',') : undefined;
const skip = new Set((process.env.BENCH_SKIP || '').split(',').filter(Boolean));
const failed = [];
const ran = [];
for (const s of SUITES) {
  if (skip.has(s.name) || (only && !only.includes(s.name))) continue;
  if (!fs.existsSync(path.join(__dirname, s.script))) {
    if (!s.optional) failed.push(`${s.name}: ${s.script} missing`);
    continue;
  }
  process.stderr.write(`\n===== bench: ${s.name} (${s.script})\n`);
  try {
    fs.rmSync(path.join(RESULTS, s.file), { force: true });
  } catch {
    /* none */
  }
  const r = spawnSync(process.execPath, [path.join(__dirname, s.script)], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) failed.push(`${s.name}: exit ${r.status}`);
  ran.push(s);
}

const lines = [
  `One table — ${new Date().toISOString()}, node ${process.version}, ${os.cpus().length} CPUs, load average at the end ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
  '',
  '| route or operation | this server | floor | ratio (≥ 1 is at or above the floor) | p99 | RSS MB |',
  '|---|---|---|---:|---|---:|',
];
for (const s of ran) {
  const r = read(s.file);
  if (!r) continue;
  for (const row of s.rows(r))
    lines.push(`| ${row[0]} | ${row[1]} | ${row[2]} | ${n(row[3])} | ${row[4] || ''} | ${row[5] !== undefined ? n(row[5], 0) : ''} |`);
}
if (failed.length) lines.push('', `Failed: ${failed.join('; ')}`);
const table = lines.join('\n');
process.stdout.write(`\n${table}\n`);
fs.mkdirSync(RESULTS, { recursive: true });
fs.writeFileSync(path.join(RESULTS, 'all-latest.md'), table + '\n');
process.exit(failed.length ? 1 : 0);
