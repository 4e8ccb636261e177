'use strict';
/**
 * Large data set for the scale benchmarks (issue: "Fast and light at scale", goal 4).
 *
 *   npm run seed:large                 (DATABASE_URL and DATA_DIR of a server built from this tree)
 *
 * At SEED_SCALE=1 (the default): 50,000 users, 10,000 projects, 200,000 issues with 2 notes each and
 * labels, 2,000 merge requests, 20,000 builds, and one repository of 100,000 commits and 50,000 files
 * (git fast-import). Rows are written with set-based SQL (generate_series), so the whole set takes a
 * minute or two. The database must be migrated (the app migrates at start; or `npm run migration:run`).
 *
 * Shape: user `seed_viewer` (not admin) is a developer of every 10th project, so it sees 1,000 of the
 * 10,000 private projects; project 1 (`seed-group/big`) holds 10,000 issues, the merge requests, the
 * builds and the big repository; the other issues are spread over the other projects. Tokens are
 * digested and encrypted with SECRET_KEY as the server does, and printed for the benchmarks.
 *
 * Env: DATABASE_URL (required), DATA_DIR (required for the repository; SEED_REPO=0 skips it),
 * SECRET_KEY (the server's), SEED_SCALE (1), SEED_COMMITS, SEED_FILES (override the repository size).
 */
const { createCipheriv, createHash, createHmac, hkdfSync, randomBytes } = require('node:crypto');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const bcrypt = require('bcryptjs');
const { Client } = require('pg');

function tokenTools(secretKey) {
  const secret = Buffer.from(secretKey, 'utf8');
  const digestKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-digest', 32));
  const encKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-encryption', 32));
  return {
    digest: (t) => createHmac('sha256', digestKey).update(t, 'utf8').digest('hex'),
    encrypt: (plain) => {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', encKey, iv);
      const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), data.toString('base64')].join(':');
    },
  };
}

function sizes(scale) {
  const n = (full, min) => Math.max(min, Math.round(full * scale));
  return {
    users: n(50_000, 50),
    projects: n(10_000, 20),
    issues: n(200_000, 400),
    bigIssues: n(10_000, 100),
    mergeRequests: n(2_000, 40),
    builds: n(20_000, 100),
    commits: Number(process.env.SEED_COMMITS || n(100_000, 200)),
    files: Number(process.env.SEED_FILES || n(50_000, 100)),
  };
}

/** Repository path of a project, as src/git/git.service.ts computes it. */
function repositoryPath(dataDir, projectId) {
  const h = createHash('sha256').update(String(projectId)).digest('hex');
  return path.join(dataDir, 'repositories', '@hashed', h.slice(0, 2), h.slice(2, 4), `${h}.git`);
}

/**
 * A bare repository of `commits` commits over `files` files on master, written by git fast-import
 * (commit c is mark :c). `extend(write, tools)`, when given, appends more to the same stream before
 * it ends (branches from those marks, tags), so the repository is packed once.
 */
async function buildRepository(dir, commits, files, extend) {
  fs.mkdirSync(dir, { recursive: true });
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir, LC_ALL: 'C' };
  execFileSync('git', ['init', '--bare', '-q', '--initial-branch=master', dir], { env });
  const gi = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: dir, env: { ...env, GIT_DIR: dir }, stdio: ['pipe', 'inherit', 'inherit'] });
  const done = new Promise((resolve, reject) => gi.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))));
  let buf = [];
  let size = 0;
  const write = async (s) => {
    buf.push(s);
    size += s.length;
    if (size > 1 << 20) {
      const chunk = buf.join('');
      buf = [];
      size = 0;
      if (!gi.stdin.write(chunk)) await new Promise((r) => gi.stdin.once('drain', r));
    }
  };
  const t0 = 1_400_000_000;
  const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  // the first commit adds every file (spread over 2 levels of folders), later ones change one file each
  const fileName = (i) => `src/d${Math.floor(i / 500)}/m${Math.floor(i / 50) % 10}/file${i}.txt`;
  await write(`commit refs/heads/master\nmark :1\ncommitter Seed <seed@example.com> ${t0} +0000\n${data('Initial import')}`);
  for (let i = 0; i < files; i++) await write(`M 100644 inline ${fileName(i)}\n${data(`file ${i}\nline two\n`)}`);
  await write('\n');
  for (let c = 2; c <= commits; c++) {
    const f = (c * 7919) % files;
    await write(
      `commit refs/heads/master\nmark :${c}\ncommitter Seed <seed@example.com> ${t0 + c * 60} +0000\n${data(`Change ${c}\n\nTouches ${fileName(f)}.`)}from :${c - 1}\nM 100644 inline ${fileName(f)}\n${data(`file ${f}\nversion ${c}\n`)}\n`,
    );
  }
  if (extend) await extend(write, { data, fileName, t0 });
  await write('done\n');
  gi.stdin.end(buf.join(''));
  await done;
  execFileSync('git', ['--git-dir', dir, 'commit-graph', 'write', '--reachable'], { env });
  execFileSync('git', ['--git-dir', dir, 'repack', '-a', '-d', '-q', '--write-bitmap-index'], { env });
}

async function seedLarge({ dbUrl, dataDir, secretKey, scale = 1, repo = true, counts: only, log = () => undefined }) {
  // `counts` overrides some of the sizes at this scale (e.g. { users: 1000, issues: 10000, bigIssues: 10000 })
  const s = { ...sizes(scale), ...(only || {}) };
  const tools = tokenTools(secretKey);
  const viewerToken = randomBytes(15).toString('base64url');
  const ownerToken = randomBytes(15).toString('base64url');
  const runnerToken = randomBytes(15).toString('base64url');
  const passwordHash = bcrypt.hashSync('seed-user-password', 10);
  const runnersToken = randomBytes(15).toString('base64url');
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  const q = (text, params) => db.query(text, params);
  const t0 = Date.now();
  try {
    await q('BEGIN');
    // users: seed_owner (owns the group and every project), seed_viewer, then the crowd
    await q(
      `INSERT INTO users (username, email, name, encrypted_password, state, admin, projects_limit, can_create_group, external,
                          bio, location, skype, linkedin, twitter, website_url, theme_id, color_scheme_id, two_factor_enabled,
                          confirmed_at, sign_in_count, private_token_digest, private_token_encrypted)
       SELECT CASE g WHEN 1 THEN 'seed_owner' WHEN 2 THEN 'seed_viewer' ELSE 'seed_user_' || g END,
              CASE g WHEN 1 THEN 'seed.owner@example.com' WHEN 2 THEN 'seed.viewer@example.com' ELSE 'seed.user.' || g || '@example.com' END,
              'Seed User ' || g, $1, 'active', false, 100000, true, false, '', '', '', '', '', '', 2, 1, false, now(), 0,
              CASE g WHEN 1 THEN $2 WHEN 2 THEN $3 ELSE md5(g::text) || md5('u' || g) END,
              CASE g WHEN 1 THEN $4 WHEN 2 THEN $5 ELSE 'unused' END
         FROM generate_series(1, $6::int) g`,
      [passwordHash, tools.digest(ownerToken), tools.digest(viewerToken), tools.encrypt(ownerToken), tools.encrypt(viewerToken), s.users],
    );
    await q(`INSERT INTO namespaces (name, path, kind, owner_id, description, visibility_level)
             SELECT username, username, 'user', id, '', 20 FROM users WHERE username LIKE 'seed\\_%'`);
    const owner = (await q(`SELECT id FROM users WHERE username = 'seed_owner'`)).rows[0].id;
    const viewer = (await q(`SELECT id FROM users WHERE username = 'seed_viewer'`)).rows[0].id;
    const firstUser = owner;
    const group = (
      await q(
        `INSERT INTO namespaces (name, path, kind, owner_id, description, visibility_level)
               VALUES ('seed-group', 'seed-group', 'group', $1, 'the seeded group', 0) RETURNING id`,
        [owner],
      )
    ).rows[0].id;
    await q(`INSERT INTO group_members (namespace_id, user_id, access_level, notification_level) VALUES ($1, $2, 50, 3)`, [group, owner]);
    // projects: all private; project "big" first
    // every project's runners token digested and sealed as the server does (an admin's project list
    // decrypts it: a placeholder there made `GET /projects?search=` answer 500 for the group's owner)
    const tokens = Array.from({ length: s.projects }, (_, i) => (i === 0 ? runnersToken : randomBytes(15).toString('hex')));
    const projects = await q(
      `INSERT INTO projects (name, path, description, namespace_id, creator_id, visibility_level, default_branch,
                             runners_token_digest, runners_token_encrypted, last_activity_at, created_at, updated_at)
       SELECT CASE g WHEN 1 THEN 'big' ELSE 'proj-' || g END, CASE g WHEN 1 THEN 'big' ELSE 'proj-' || g END,
              'Seeded project number ' || g, $1, $2, 0, 'master', ($3::text[])[g], ($4::text[])[g],
              now() - g * interval '1 minute', now() - g * interval '1 minute', now() - g * interval '1 minute'
         FROM generate_series(1, $5::int) g RETURNING id`,
      [group, owner, tokens.map(tools.digest), tokens.map(tools.encrypt), s.projects],
    );
    const bigId = projects.rows[0].id;
    const firstProject = bigId;
    // the viewer is a developer of every 10th project (the big one included)
    await q(
      `INSERT INTO project_members (project_id, user_id, access_level, notification_level)
       SELECT p, $1, 30, 3 FROM generate_series($2::int, $2::int + $3::int - 1) p WHERE (p - $2) % 10 = 0`,
      [viewer, firstProject, s.projects],
    );
    await q(`INSERT INTO users_star_projects (project_id, user_id) SELECT p, $1 FROM generate_series($2::int, $2::int + 99) p WHERE p < $2 + $3`, [
      viewer,
      firstProject,
      s.projects,
    ]);
    // labels and milestones: 5 labels and 3 milestones per project
    await q(
      `INSERT INTO labels (project_id, title, color, description)
       SELECT p, 'label-' || l, '#' || lpad(to_hex(l * 3000000), 6, '0'), 'Label ' || l
         FROM generate_series($1::int, $1::int + $2::int - 1) p, generate_series(1, 5) l`,
      [firstProject, s.projects],
    );
    await q(
      `INSERT INTO milestones (iid, project_id, title, description, state, due_date)
       SELECT m, p, 'v' || m || '.0', 'Milestone ' || m, CASE WHEN m = 1 THEN 'closed' ELSE 'active' END, current_date + m * 30
         FROM generate_series($1::int, $1::int + $2::int - 1) p, generate_series(1, 3) m`,
      [firstProject, s.projects],
    );
    // issues: bigIssues in the big project, the rest spread evenly over the others
    const rest = s.issues - s.bigIssues;
    const others = s.projects - 1;
    await q(
      `INSERT INTO issues (iid, project_id, title, description, state, confidential, author_id, assignee_id, milestone_id,
                           created_at, updated_at)
       SELECT x.iid, x.project_id, 'Issue ' || x.iid || ' about ' || (ARRAY['login','push','merge','build','hooks','search','api','ui'])[1 + x.g % 8] || ' ' || x.g,
              'Steps to reproduce issue ' || x.g, CASE WHEN x.g % 3 = 0 THEN 'closed' ELSE 'opened' END, x.g % 50 = 0,
              $1::int + (x.g * 7) % $2::int, CASE WHEN x.g % 4 = 0 THEN NULL ELSE $1::int + (x.g * 13) % $2::int END,
              CASE WHEN x.g % 5 = 0 THEN NULL ELSE (SELECT id FROM milestones m WHERE m.project_id = x.project_id AND m.iid = 1 + x.g % 3) END,
              now() - (x.g || ' seconds')::interval, now() - (x.g || ' seconds')::interval
         FROM (SELECT g, CASE WHEN g <= $3 THEN $4::int ELSE $4::int + 1 + (g - $3 - 1) % $5::int END AS project_id,
                      CASE WHEN g <= $3 THEN g ELSE 1 + (g - $3 - 1) / $5::int END AS iid
                 FROM generate_series(1, $3::int + $6::int) g) x`,
      [firstUser, s.users, s.bigIssues, firstProject, Math.max(1, others), rest],
    );
    await q(`INSERT INTO internal_ids (project_id, usage, last_value)
             SELECT project_id, 'issues', max(iid) FROM issues GROUP BY project_id
             ON CONFLICT (project_id, usage) DO UPDATE SET last_value = EXCLUDED.last_value`);
    await q(`INSERT INTO internal_ids (project_id, usage, last_value)
             SELECT project_id, 'milestones', 3 FROM milestones GROUP BY project_id
             ON CONFLICT (project_id, usage) DO UPDATE SET last_value = EXCLUDED.last_value`);
    // one or two labels per issue
    await q(`INSERT INTO label_links (label_id, target_type, target_id)
             SELECT l.id, 'Issue', i.id FROM issues i JOIN labels l ON l.project_id = i.project_id
              WHERE l.title = 'label-' || (1 + i.id % 5) OR (i.id % 3 = 0 AND l.title = 'label-' || (1 + (i.id + 2) % 5))`);
    // two notes per issue
    await q(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, system, created_at, updated_at)
       SELECT i.project_id, 'Issue', i.id, $1::int + (i.id * n) % $2::int, 'Comment ' || n || ' on issue ' || i.iid, false, i.created_at, i.created_at
         FROM issues i, generate_series(1, 2) n`,
      [firstUser, s.users],
    );
    // merge requests in the big project
    await q(
      `INSERT INTO merge_requests (iid, project_id, source_project_id, source_branch, target_branch, title, description, state,
                                   merge_status, author_id, assignee_id, milestone_id, created_at, updated_at)
       SELECT g, $1, $1, 'feature-' || g, 'master', 'Merge request ' || g, 'Changes ' || g,
              CASE WHEN g % 4 = 0 THEN 'merged' WHEN g % 7 = 0 THEN 'closed' ELSE 'opened' END, 'can_be_merged',
              $2::int + (g * 11) % $3::int, CASE WHEN g % 3 = 0 THEN NULL ELSE $2::int + (g * 17) % $3::int END,
              CASE WHEN g % 2 = 0 THEN NULL ELSE (SELECT id FROM milestones m WHERE m.project_id = $1 AND m.iid = 2) END,
              now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval
         FROM generate_series(1, $4::int) g`,
      [bigId, firstUser, s.users, s.mergeRequests],
    );
    await q(
      `INSERT INTO internal_ids (project_id, usage, last_value) VALUES ($1, 'merge_requests', $2)
             ON CONFLICT (project_id, usage) DO UPDATE SET last_value = EXCLUDED.last_value`,
      [bigId, s.mergeRequests],
    );
    // a runner of the big project, then pipelines of 4 builds each, all finished
    const runner = (
      await q(
        `INSERT INTO ci_runners (token_digest, token_encrypted, description, contacted_at, active, is_shared, name, version)
               VALUES ($1, $2, 'seeded runner', now(), true, false, 'gitlab-ci-multi-runner', '1.3.5') RETURNING id`,
        [tools.digest(runnerToken), tools.encrypt(runnerToken)],
      )
    ).rows[0].id;
    await q(`INSERT INTO ci_runner_projects (runner_id, project_id) VALUES ($1, $2)`, [runner, bigId]);
    const pipelines = Math.ceil(s.builds / 4);
    await q(
      `INSERT INTO ci_pipelines (project_id, ref, sha, before_sha, tag, status, user_id, started_at, finished_at, created_at, updated_at)
       SELECT $1, 'master', md5(g::text) || substr(md5('s' || g), 1, 8), repeat('0', 40), false,
              CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'success' END, $2,
              now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval + interval '30 seconds',
              now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval
         FROM generate_series(1, $3::int) g`,
      [bigId, owner, pipelines],
    );
    await q(
      `WITH st AS (
         INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, author_id, started_at, finished_at,
                                      created_at, updated_at, pipeline_id)
         SELECT p.project_id, p.sha, p.ref, (ARRAY['rubocop','rspec','spinach','deploy'])[b], (ARRAY['test','test','test','deploy'])[b],
                CASE WHEN p.status = 'failed' AND b = 2 THEN 'failed' WHEN p.status = 'failed' AND b = 4 THEN 'skipped' ELSE 'success' END,
                false, p.user_id, p.started_at, p.finished_at, p.created_at, p.updated_at, p.id
           FROM ci_pipelines p, generate_series(1, 4) b WHERE p.project_id = $1
          ORDER BY p.id, b
          RETURNING id, pipeline_id, project_id, stage)
       INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands, runner_id, user_id, trace_size)
       SELECT id, pipeline_id, project_id, CASE WHEN stage = 'deploy' THEN 1 ELSE 0 END, 'make test', $2, $3, 0 FROM st`,
      [bigId, runner, owner],
    );
    await q('COMMIT');
  } catch (e) {
    await q('ROLLBACK').catch(() => undefined);
    throw e;
  }
  log(`rows written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const t1 = Date.now();
  // the state autovacuum leaves a bulk load in (statistics, and the visibility map that index-only scans read)
  await q('VACUUM (ANALYZE)');
  const counts = (
    await q(`SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM projects)::int AS projects,
                    (SELECT count(*) FROM issues)::int AS issues, (SELECT count(*) FROM notes)::int AS notes,
                    (SELECT count(*) FROM label_links)::int AS label_links, (SELECT count(*) FROM merge_requests)::int AS merge_requests,
                    (SELECT count(*) FROM ci_builds)::int AS builds`)
  ).rows[0];
  const big = (await q(`SELECT id FROM projects WHERE path = 'big' AND namespace_id = (SELECT id FROM namespaces WHERE path = 'seed-group')`)).rows[0].id;
  await db.end();
  log(`vacuumed and analyzed in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  if (repo && dataDir) {
    const t2 = Date.now();
    const dir = repositoryPath(dataDir, big);
    fs.rmSync(dir, { recursive: true, force: true });
    await buildRepository(dir, s.commits, s.files);
    counts.commits = s.commits;
    counts.files = s.files;
    log(`repository of ${s.commits} commits and ${s.files} files written in ${((Date.now() - t2) / 1000).toFixed(1)} s`);
  }
  return { counts, bigProjectId: big, viewerToken, ownerToken, runnerToken, repoPath: repo && dataDir ? repositoryPath(dataDir, big) : undefined };
}

module.exports = { seedLarge, sizes, repositoryPath, buildRepository };

if (require.main === module) {
  const dbUrl = process.env.DATABASE_URL;
  const dataDir = process.env.DATA_DIR;
  if (!dbUrl) {
    process.stderr.write('seed:large needs DATABASE_URL (a migrated database) and DATA_DIR\n');
    process.exit(2);
  }
  let secretKey = process.env.SECRET_KEY;
  if (!secretKey && dataDir && fs.existsSync(path.join(dataDir, 'secret_key'))) secretKey = fs.readFileSync(path.join(dataDir, 'secret_key'), 'utf8').trim();
  if (!secretKey) {
    process.stderr.write("seed:large needs SECRET_KEY or DATA_DIR/secret_key (the server's key)\n");
    process.exit(2);
  }
  seedLarge({
    dbUrl,
    dataDir,
    secretKey,
    scale: Number(process.env.SEED_SCALE || 1),
    repo: process.env.SEED_REPO !== '0',
    log: (m) => process.stdout.write(`seed: ${m}\n`),
  })
    .then((r) => {
      process.stdout.write(
        JSON.stringify({ ...r.counts, big_project_id: r.bigProjectId, viewer_token: r.viewerToken, owner_token: r.ownerToken }, null, 2) + '\n',
      );
    })
    .catch((e) => {
      process.stderr.write(`seed failed: ${e.stack || e.message}\n`);
      process.exit(1);
    });
}
