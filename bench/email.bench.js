'use strict';
/**
 * Email notification benchmark: the built app (dist/main.js) on PostgreSQL and a local SMTP sink
 * (smtp-server, accepting everything).
 *
 *   npm run bench:email          (builds first)
 *
 * A public project's issue with BENCH_SUBSCRIBERS (200) subscribers:
 * 1. API time of a comment on it (POST .../notes, median of BENCH_NOTES, 20, sequential calls) with
 *    notifications on (SMTP_URL set) and off (the same database, the app restarted without SMTP_URL).
 *    Aim: on / off ≤ 1.1 — the request only writes the event's job; mails are planned and sent by workers.
 * 2. Time from one comment's POST until the SMTP sink has accepted its BENCH_SUBSCRIBERS-th mail.
 *
 * Env: BENCH_DATABASE_URL (a throw-away database: its `public` and `pgboss` schemas are dropped), else a
 * new database is created under BENCH_PG_URL and dropped at the end; BENCH_SUBSCRIBERS, BENCH_NOTES.
 */
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { SMTPServer } = require('smtp-server');
const { createHarness } = require('./harness');

const h = createHarness('bench:email');
const { log, sleep } = h;
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS || 200);
const NOTES = Number(process.env.BENCH_NOTES || 20);
const ROOT_PASSWORD = 'bench-root-password';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

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
  let dbUrl = process.env.BENCH_DATABASE_URL;
  if (dbUrl) {
    const c = new Client({ connectionString: dbUrl });
    await c.connect();
    await c.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; DROP SCHEMA IF EXISTS pgboss CASCADE;');
    await c.end();
  } else {
    dbUrl = await h.createDatabase(`bench_email_${Date.now()}_${process.pid}`);
  }
  const smtp = await sink();
  h.onCleanup(() => smtp.server.close());
  const port = await h.freePort();
  const base = `http://127.0.0.1:${port}`;
  const data = h.tempDir('bench-email-');
  const env = {
    DATABASE_URL: dbUrl, DATA_DIR: data, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error', SSH_ENABLED: 'false',
    ROOT_PASSWORD, SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789abcdef', QUEUE_POLL_SECONDS: '0.5',
    EXTERNAL_URL: 'http://gitlab.bench',
  };
  const start = async (on) => {
    const app = h.startProcess(on ? 'app (email on)' : 'app (email off)', ['dist/main.js'], { ...env, SMTP_URL: on ? `smtp://127.0.0.1:${smtp.port}` : '' });
    await h.waitReady(app, base);
    return app;
  };
  const stop = (app) => new Promise((r) => {
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
  const s = await fetch(`${base}/api/v3/session`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ login: 'root', password: ROOT_PASSWORD }) });
  token = (await s.json()).private_token;
  const project = await call('POST', '/projects', { name: 'mailbench', visibility_level: 20 });
  const issue = await call('POST', `/projects/${project.id}/issues`, { title: 'Busy issue' });
  log(`creating ${SUBSCRIBERS} subscribers`);
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const u = await call('POST', '/users', { username: `sub${i}`, email: `sub${i}@bench.test`, name: `Sub ${i}`, password: `password-${i}`, confirm: false });
    await call('POST', `/projects/${project.id}/issues/${issue.id}/subscription`, undefined, u.id);
  }
  const subject = `Re: mailbench | Busy issue (#${issue.iid})`;
  const notes = async (label) => {
    for (let i = 0; i < 3; i++) await call('POST', `/projects/${project.id}/issues/${issue.id}/notes`, { body: `warm-up ${label} ${i}` });
    const times = [];
    for (let i = 0; i < NOTES; i++) {
      const t0 = process.hrtime.bigint();
      await call('POST', `/projects/${project.id}/issues/${issue.id}/notes`, { body: `${label} ${i}` });
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return median(times);
  };

  // 2. time to the last mail of one comment (nothing else queued)
  const before = smtp.state.bySubject.get(subject) || 0;
  const t0 = Date.now();
  await call('POST', `/projects/${project.id}/issues/${issue.id}/notes`, { body: 'fan-out' });
  const deadline = Date.now() + 300_000;
  while ((smtp.state.bySubject.get(subject) || 0) - before < SUBSCRIBERS && Date.now() < deadline) await sleep(20);
  const got = (smtp.state.bySubject.get(subject) || 0) - before;
  const fanoutSeconds = (smtp.state.last - t0) / 1000;
  log(`one comment: ${got}/${SUBSCRIBERS} mails accepted in ${fanoutSeconds.toFixed(2)} s`);

  // 1. API time on vs off
  const onMs = await notes('on');
  await stop(app);
  app = await start(false);
  const offMs = await notes('off');
  await stop(app);
  log(`POST note median: notifications on ${onMs.toFixed(1)} ms, off ${offMs.toFixed(1)} ms, ratio ${(onMs / offMs).toFixed(2)} (aim <= 1.1)`);

  const result = { subscribers: SUBSCRIBERS, notes: NOTES, noteMedianMsOn: onMs, noteMedianMsOff: offMs, ratio: onMs / offMs, mailsAccepted: got, secondsToLastMail: fanoutSeconds };
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'email-latest.json'), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result) + '\n');
  if (got < SUBSCRIBERS) throw new Error('not every mail arrived');
});
