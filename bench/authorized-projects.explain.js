'use strict';
/**
 * The membership scope of project lists, before and after `project_authorizations` (migration
 * 1734200000000), on a database seeded by bench/seed-large.js and migrated by this tree:
 *
 *   DATABASE_URL=postgres://…/seeded node bench/authorized-projects.explain.js
 *
 * Each statement the project lists send for the seed's viewer (a developer of 1,000 of the 10,000
 * projects) runs with the old condition (three membership subqueries ORed over every project) and
 * the new one (the viewer's rows of project_authorizations), paired and interleaved (A B A B …,
 * BENCH_ROUNDS, 40), under EXPLAIN (ANALYZE, BUFFERS): PostgreSQL's own planning and execution time
 * and shared buffers per statement; then the backend's own CPU time per statement (utime + stime of
 * its process in /proc, over BENCH_CPU_BATCH executions per batch, old and new batches alternating
 * BENCH_CPU_PAIRS times) — CPU of one backend, not wall time, so other load on the machine barely
 * moves it. Prints a markdown table of medians.
 */
const fs = require('node:fs');
const { Client } = require('pg');

const CPU_BATCH = Number(process.env.BENCH_CPU_BATCH || 100);
const CPU_PAIRS = Number(process.env.BENCH_CPU_PAIRS || 4);
const TICK_MS = 1000 / 100; // USER_HZ

function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

async function cpuPerStatement(client, pid, sql, params) {
  const t0 = cpuMs(pid);
  for (let i = 0; i < CPU_BATCH; i++) await client.query(sql, params);
  return (cpuMs(pid) - t0) / CPU_BATCH;
}

const ROUNDS = Number(process.env.BENCH_ROUNDS || 40);

const OLD = `(p.namespace_id IN (SELECT id FROM namespaces WHERE kind = 'user' AND owner_id = $1)
         OR p.id IN (SELECT project_id FROM project_members WHERE user_id = $1)
         OR p.namespace_id IN (SELECT namespace_id FROM group_members WHERE user_id = $1))`;
const NEW = `p.id IN (SELECT project_id FROM project_authorizations WHERE user_id = $1)`;

const PROJECT_COLS = `p.id, p.name, p.path, p.description, p.namespace_id, p.creator_id, p.visibility_level, p.default_branch,
  p.issues_enabled, p.merge_requests_enabled, p.wiki_enabled, p.builds_enabled, p.snippets_enabled, p.container_registry_enabled,
  p.shared_runners_enabled, p.public_builds, p.archived, p.star_count, p.forked_from_project_id, p.import_url, p.import_status,
  p.import_error, p.runners_token_digest, p.runners_token_encrypted, p.last_activity_at, p.created_at, p.updated_at,
  n.id, n.name, n.path, n.kind, n.owner_id, n.description, n.visibility_level, n.created_at, n.updated_at`;
const SEARCH = `p.id IN (SELECT sp.id FROM projects sp WHERE lower(sp.name) LIKE $2
  UNION ALL SELECT sp.id FROM projects sp WHERE lower(sp.path) LIKE $2
  UNION ALL SELECT sp.id FROM projects sp WHERE lower(coalesce(sp.description, '')) LIKE $2
  UNION ALL SELECT sp.id FROM projects sp JOIN namespaces sn ON sn.id = sp.namespace_id WHERE lower(sn.name) LIKE $2)`;

const STATEMENTS = [
  {
    name: 'GET /projects (member, page 1)',
    sql: (c) => `SELECT ${PROJECT_COLS}, count(*) OVER () AS window_total FROM projects p JOIN namespaces n ON n.id = p.namespace_id
      WHERE (${c}) ORDER BY p.created_at DESC, p.id DESC LIMIT 20 OFFSET 0`,
    params: (v) => [v],
  },
  {
    name: 'GET /projects page 50',
    sql: (c) => `SELECT ${PROJECT_COLS}, count(*) OVER () AS window_total FROM projects p JOIN namespaces n ON n.id = p.namespace_id
      WHERE (${c}) ORDER BY p.created_at DESC, p.id DESC LIMIT 20 OFFSET 980`,
    params: (v) => [v],
  },
  {
    name: 'GET /projects?search=proj-4321',
    sql: (c) => `SELECT ${PROJECT_COLS}, count(*) OVER () AS window_total FROM projects p JOIN namespaces n ON n.id = p.namespace_id
      WHERE (${c}) AND ${SEARCH} ORDER BY p.created_at DESC, p.id DESC LIMIT 20 OFFSET 0`,
    params: (v) => [v, '%proj-4321%'],
  },
  {
    name: 'GET /projects/search/:q (readable: public, internal or member)',
    sql: (c) => `SELECT ${PROJECT_COLS}, count(*) OVER () AS window_total FROM projects p JOIN namespaces n ON n.id = p.namespace_id
      WHERE (p.visibility_level IN (10, 20) OR ${c}) AND lower(p.name) LIKE $2 ORDER BY p.id ASC LIMIT 20 OFFSET 0`,
    params: (v) => [v, '%proj-1%'],
  },
  {
    name: 'GET /issues (page of ids, readable projects)',
    sql: (c) => `SELECT i.id, count(*) OVER () AS total FROM issues i JOIN projects p ON p.id = i.project_id
      WHERE i.deleted_at IS NULL AND i.author_id = $1 AND p.issues_enabled AND (p.visibility_level IN (10, 20) OR ${c})
      ORDER BY i.created_at DESC, i.id DESC LIMIT 20 OFFSET 0`,
    params: (v) => [v],
  },
];

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function explain(client, sql, params) {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
  const plan = rows[0]['QUERY PLAN'][0];
  const buffers = (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0);
  return { planning: plan['Planning Time'], execution: plan['Execution Time'], buffers };
}

async function main() {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const { rows } = await client.query(`SELECT id FROM users WHERE username = 'seed_viewer'`);
  if (!rows.length) throw new Error('no seed_viewer: seed the database with bench/seed-large.js first');
  const viewer = rows[0].id;
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const out = [];
  for (const st of STATEMENTS) {
    const res = { old: [], new: [] };
    // same answers first
    const a = await client.query(st.sql(OLD), st.params(viewer));
    const b = await client.query(st.sql(NEW), st.params(viewer));
    if (JSON.stringify(a.rows) !== JSON.stringify(b.rows)) throw new Error(`${st.name}: the two conditions answer differently`);
    for (let i = 0; i < 3; i++) {
      await explain(client, st.sql(OLD), st.params(viewer));
      await explain(client, st.sql(NEW), st.params(viewer));
    }
    for (let i = 0; i < ROUNDS; i++) {
      res.old.push(await explain(client, st.sql(OLD), st.params(viewer)));
      res.new.push(await explain(client, st.sql(NEW), st.params(viewer)));
    }
    const cpu = { old: [], new: [] };
    for (let i = 0; i < CPU_PAIRS; i++) {
      cpu.old.push(await cpuPerStatement(client, pid, st.sql(OLD), st.params(viewer)));
      cpu.new.push(await cpuPerStatement(client, pid, st.sql(NEW), st.params(viewer)));
    }
    const m = (xs, k) => median(xs.map((x) => x[k]));
    out.push({
      name: st.name,
      rows: a.rows.length,
      cpu: { old: cpu.old, new: cpu.new },
      old: { planning: m(res.old, 'planning'), execution: m(res.old, 'execution'), buffers: m(res.old, 'buffers') },
      new: { planning: m(res.new, 'planning'), execution: m(res.new, 'execution'), buffers: m(res.new, 'buffers') },
    });
  }
  await client.end();
  console.log(
    `viewer ${viewer}; EXPLAIN: ${ROUNDS} paired rounds per statement (old, new interleaved), medians; ` +
      `backend CPU: ${CPU_PAIRS} pairs of ${CPU_BATCH}-statement batches, each batch's CPU per statement listed\n`,
  );
  console.log(
    '| statement | rows | old planning / execution ms | old buffers | new planning / execution ms | new buffers | backend CPU ms/stmt old | new | new/old |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---|---|---:|');
  for (const r of out) {
    console.log(
      `| ${r.name} | ${r.rows} | ${r.old.planning.toFixed(2)} / ${r.old.execution.toFixed(2)} | ${r.old.buffers} | ` +
        `${r.new.planning.toFixed(2)} / ${r.new.execution.toFixed(2)} | ${r.new.buffers} | ` +
        `${r.cpu.old.map((x) => x.toFixed(2)).join(', ')} | ${r.cpu.new.map((x) => x.toFixed(2)).join(', ')} | ` +
        `${(median(r.cpu.new) / median(r.cpu.old)).toFixed(2)} |`,
    );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
