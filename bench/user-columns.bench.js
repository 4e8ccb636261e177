'use strict';
/**
 * What a list pays for the users rows it joins (issue 27): the issues list's statement (a page of 20
 * issues of the big project with author, assignee and milestone) sent with every column of both
 * users rows (before) and with the six the presenters read (after, USER_SUMMARY_PROPERTIES), on a
 * database seeded by bench/seed-large.js:
 *
 *   DATABASE_URL=postgres://…/seeded node bench/user-columns.bench.js
 *
 * Both variants alternate in batches (BENCH_BATCH executions, BENCH_PAIRS pairs, named prepared
 * statements as the app sends them); per statement: this process's CPU (the pg driver receiving and
 * parsing the rows: the part of the app's work that changes) and the backend's CPU (/proc), and the
 * bytes of the rows. CPU time, not wall time, so the rest of the machine's load moves it little.
 */
const fs = require('node:fs');
const { Client } = require('pg');

const BATCH = Number(process.env.BENCH_BATCH || 200);
const PAIRS = Number(process.env.BENCH_PAIRS || 4);
const PROJECT = Number(process.env.BENCH_PROJECT || 1);

function backendCpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(x[11]) + Number(x[12])) * 10;
}

async function main() {
  const c = new Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  const pid = (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p;
  const cols = (
    await c.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'users' AND table_schema = 'public' ORDER BY ordinal_position`)
  ).rows.map((r) => r.column_name);
  const summary = ['id', 'username', 'name', 'state', 'email', 'created_at'];
  const list = (alias, prefix, names) => names.map((n) => `${alias}."${n}" AS "${prefix}.${n}"`).join(', ');
  const sql = (names) => `WITH page AS MATERIALIZED (
      SELECT i.id, count(*) OVER () AS total FROM issues i WHERE i.project_id = $1 AND i.deleted_at IS NULL
       ORDER BY i.created_at DESC, i.id DESC LIMIT 20)
    SELECT page.total, i.*, ${list('a', 'author', names)}, ${list('s', 'assignee', names)}, m.id AS "m.id", m.title AS "m.title"
      FROM page JOIN issues i ON i.id = page.id LEFT JOIN users a ON a.id = i.author_id LEFT JOIN users s ON s.id = i.assignee_id
      LEFT JOIN milestones m ON m.id = i.milestone_id ORDER BY i.created_at DESC, i.id DESC`;
  const variants = { before: sql(cols), after: sql(summary) };
  const out = {};
  for (const [k, text] of Object.entries(variants)) {
    const r = await c.query({ name: k, text, values: [PROJECT] });
    out[k] = { columns: r.fields.length, bytes: Buffer.byteLength(JSON.stringify(r.rows)), app: [], pg: [] };
  }
  for (let i = 0; i < PAIRS; i++) {
    for (const [k, text] of Object.entries(variants)) {
      const pg0 = backendCpuMs(pid);
      const app0 = process.cpuUsage();
      for (let j = 0; j < BATCH; j++) await c.query({ name: k, text, values: [PROJECT] });
      const app = process.cpuUsage(app0);
      out[k].app.push((app.user + app.system) / 1000 / BATCH);
      out[k].pg.push((backendCpuMs(pid) - pg0) / BATCH);
    }
  }
  await c.end();
  const f = (xs) => xs.map((x) => x.toFixed(3)).join(', ');
  console.log(`users columns: ${cols.length}; ${PAIRS} pairs of ${BATCH}-statement batches\n`);
  console.log('| variant | result columns | rows as JSON, bytes | client CPU ms/statement | backend CPU ms/statement |');
  console.log('|---|---:|---:|---|---|');
  for (const [k, v] of Object.entries(out)) console.log(`| ${k} | ${v.columns} | ${v.bytes} | ${f(v.app)} | ${f(v.pg)} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
