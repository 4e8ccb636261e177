'use strict';
/**
 * Email notification benchmark: the built app (dist/main.js, or BENCH_APP_MAIN) on PostgreSQL and a
 * local SMTP sink (smtp-server, accepting everything).
 *
 *   npm run bench:email          (builds first)
 *
 * A public project's issue with BENCH_SUBSCRIBERS (200) subscribers:
 * 1. Time from one comment's POST until the SMTP sink has accepted its BENCH_SUBSCRIBERS-th mail.
 * 2. API time of a comment on it (POST .../notes) with notifications on (SMTP_URL set) and off (the same
 *    database, the app restarted without SMTP_URL), in rounds on, off, off, on (paired, as the machine's
 *    load drifts), two ways:
 *    - the request's own time (the aim: on / off ≤ 1.1 — the request only writes the event's job; mails
 *      are planned and sent by workers): BENCH_NOTES (20) comments, each posted once the previous
 *      comments' mails are all sent (no job of any queue pending), median wall time and the app's mean
 *      CPU time per request (/proc);
 *    - under fan-out: BENCH_BUSY_NOTES (10) comments back to back, so that each request shares the
 *      process with the planning and sending of the earlier comments' mails (reported, no aim).
 *
 * Env: BENCH_DATABASE_URL (a throw-away database: its `public` and `pgboss` schemas are dropped), else a
 * new database is created under BENCH_PG_URL and dropped at the end; BENCH_SUBSCRIBERS, BENCH_NOTES,
 * BENCH_BUSY_NOTES, BENCH_ROUNDS (2), BENCH_APP_MAIN.
 */
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { SMTPServer } = require('smtp-server');
const { createHarness, rootToken } = require('./harness');

const h = createHarness('bench:email');
const { log, sleep, cpuMs } = h;
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS || 200);
const NOTES = Number(process.env.BENCH_NOTES || 20);
const BUSY_NOTES = Number(process.env.BENCH_BUSY_NOTES || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2);
const MAIN = path.resolve(h.ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
const ROOT_PASSWORD = 'bench-root-password';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** An SMTP sink on a free loopback port: counts accepted mails by subject. */
function sink() {
  const state = { bySubject: new Map(), total: 0, last: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, cb) {
      let head = '';
      stream.on('data', (c) => {
        if (head.length < 8192) head += c.toString('utf8');
      });
      stream.on('end', () => {
        const m = /^Subject: (.*)$/im.exec(head);
        const s = m ? m[1].trim() : '';
        state.bySubject.set(s, (state.bySubject.get(s) || 0) + 1);
        state.total++;
        state.last = Date.now();
        cb();
      });
    },
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, state, port: server.server.address().port })));
}

h.run(async () => {
  const dbUrl = await h.benchDatabase('bench_email');
  const smtp = await sink();
  h.onCleanup(() => smtp.server.close());
  const port = await h.freePort();
  const base = `http://127.0.0.1:${port}`;
  const data = h.tempDir('bench-email-');
  const env = {
    DATABASE_URL: dbUrl,
    DATA_DIR: data,
    SSH_ENABLED: 'false',
    ROOT_PASSWORD,
    SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789abcdef',
    QUEUE_POLL_SECONDS: '0.5',
    EXTERNAL_URL: 'http://gitlab.bench',
  };
  const start = async (on) => {
    const name = on ? 'app (email on)' : 'app (email off)';
    return (await h.startApp(name, [MAIN], { ...env, SMTP_URL: on ? `smtp://127.0.0.1:${smtp.port}` : '' }, { port })).child;
  };
  const stop = (app) =>
    new Promise((r) => {
      app.stopping = true;
      app.once('exit', r);
      app.kill('SIGTERM');
    });
  let token;
  const call = async (method, p, body, sudo) => {
    const headers = { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' };
    if (sudo) headers.SUDO = String(sudo);
    const r = await fetch(`${base}/api/v3${p}`, { method, headers, body: body && JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };

  let app = await start(true);
  token = await rootToken(base, ROOT_PASSWORD);
  const project = await call('POST', '/projects', { name: 'mailbench', visibility_level: 20 });
  const issue = await call('POST', `/projects/${project.id}/issues`, { title: 'Busy issue' });
  log(`creating ${SUBSCRIBERS} subscribers`);
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const u = await call('POST', '/users', { username: `sub${i}`, email: `sub${i}@bench.test`, name: `Sub ${i}`, password: `password-${i}`, confirm: false });
    await call('POST', `/projects/${project.id}/issues/${issue.id}/subscription`, undefined, u.id);
  }
  const subject = `Re: mailbench | Busy issue (#${issue.iid})`;
  const mailsOf = () => smtp.state.bySubject.get(subject) || 0;
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  h.onCleanup(() => db.end());
  /**
   * Until no job is pending (the notification planning and mails, and in both modes every other durable
   * reaction to a comment) and every mail of the comments so far has arrived.
   */
  let expectedMails = 0;
  const drained = async () => {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const { rows } = await db.query(
        "SELECT count(*)::int AS n FROM pgboss.job WHERE name NOT LIKE '\\_\\_pgboss%' AND state IN ('created', 'retry', 'active') AND start_after <= now()",
      );
      if (rows[0].n === 0 && mailsOf() >= expectedMails) return;
      if (Date.now() > deadline) throw new Error(`queue not drained: ${rows[0].n} jobs pending, ${mailsOf()}/${expectedMails} mails`);
      await sleep(20);
    }
  };
  const post = (body) => call('POST', `/projects/${project.id}/issues/${issue.id}/notes`, { body });
  /** One round in the running app: the request's own time (drained before each), then back to back. */
  const round = async (label, on) => {
    const perNote = on ? SUBSCRIBERS : 0;
    for (let i = 0; i < 3; i++) await post(`warm-up ${label} ${i}`);
    expectedMails += 3 * perNote;
    await drained();
    const ms = [];
    const cpu = [];
    for (let i = 0; i < NOTES; i++) {
      await drained();
      await sleep(250); // the previous request's own after-work (durable events of other handlers), in both modes
      const c0 = cpuMs(app.pid);
      const t0 = process.hrtime.bigint();
      await post(`${label} ${i}`);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      cpu.push(cpuMs(app.pid) - c0);
      expectedMails += perNote;
    }
    const busy = [];
    for (let i = 0; i < BUSY_NOTES; i++) {
      const t0 = process.hrtime.bigint();
      await post(`${label} busy ${i}`);
      busy.push(Number(process.hrtime.bigint() - t0) / 1e6);
      expectedMails += perNote;
    }
    await drained();
    const r = { median_ms: median(ms), cpu_ms_per_request: mean(cpu), busy_median_ms: median(busy), samples: { ms, cpu, busy } };
    log(`${label}: own ${r.median_ms.toFixed(1)} ms (app CPU ${r.cpu_ms_per_request.toFixed(1)} ms), under fan-out ${r.busy_median_ms.toFixed(1)} ms`);
    return r;
  };

  // 1. time to the last mail of one comment (nothing else queued)
  const before = mailsOf();
  await drained();
  await sleep(250);
  const fanoutCpu0 = cpuMs(app.pid);
  const t0 = Date.now();
  await post('fan-out');
  expectedMails = before + SUBSCRIBERS;
  const deadline = Date.now() + 300_000;
  while (mailsOf() - before < SUBSCRIBERS && Date.now() < deadline) await sleep(20);
  const got = mailsOf() - before;
  const fanoutSeconds = (smtp.state.last - t0) / 1000;
  if (got < SUBSCRIBERS) throw new Error('not every mail arrived');
  await drained();
  const fanoutCpuMs = cpuMs(app.pid) - fanoutCpu0;
  log(
    `one comment: ${got}/${SUBSCRIBERS} mails accepted in ${fanoutSeconds.toFixed(2)} s; app CPU ${Math.round(fanoutCpuMs)} ms (${(fanoutCpuMs / SUBSCRIBERS).toFixed(1)} ms a mail)`,
  );

  // 2. API time on vs off, paired rounds in the order on, off, off, on, on, off, ... (a drift of the machine's
  // load, or of the request's cost as the issue gathers comments, weighs on both alike)
  const on = [];
  const off = [];
  let running = true; // the app started above has notifications on
  for (const mode of Array.from({ length: ROUNDS }, (_, k) => (k % 2 === 0 ? [true, false] : [false, true])).flat()) {
    if (mode !== running) {
      await stop(app);
      app = await start(mode);
      running = mode;
    }
    if (mode) on.push(await round(`on #${on.length + 1}`, true));
    else off.push(await round(`off #${off.length + 1}`, false));
  }
  await stop(app);
  // every round's samples pooled: the median of all on-requests against that of all off-requests
  const pooled = (rs, key) => rs.flatMap((r) => r.samples[key]);
  const result = {
    subscribers: SUBSCRIBERS,
    notes: NOTES,
    rounds: ROUNDS,
    noteMedianMsOn: median(pooled(on, 'ms')),
    noteMedianMsOff: median(pooled(off, 'ms')),
    ratio: median(pooled(on, 'ms')) / median(pooled(off, 'ms')),
    noteCpuMsOn: mean(pooled(on, 'cpu')),
    noteCpuMsOff: mean(pooled(off, 'cpu')),
    busyNotes: BUSY_NOTES,
    noteMedianMsOnUnderFanout: median(pooled(on, 'busy')),
    noteMedianMsOffBackToBack: median(pooled(off, 'busy')),
    roundsOn: on.map(({ samples: _s, ...r }) => r),
    roundsOff: off.map(({ samples: _s, ...r }) => r),
    mailsAccepted: got,
    secondsToLastMail: fanoutSeconds,
    fanoutAppCpuMs: fanoutCpuMs,
  };
  log(
    `POST note: own time on ${result.noteMedianMsOn.toFixed(1)} ms, off ${result.noteMedianMsOff.toFixed(1)} ms, ratio ${result.ratio.toFixed(2)} (aim <= 1.1); ` +
      `app CPU per request on ${result.noteCpuMsOn.toFixed(1)} ms, off ${result.noteCpuMsOff.toFixed(1)} ms; ` +
      `under fan-out on ${result.noteMedianMsOnUnderFanout.toFixed(1)} ms, off ${result.noteMedianMsOffBackToBack.toFixed(1)} ms`,
  );
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'email-latest.json'), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result) + '\n');
});
