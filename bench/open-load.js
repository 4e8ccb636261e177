'use strict';
/**
 * An open-model load generator (bench/reference.bench.js): iterations are started on a fixed
 * schedule — iteration i at start + i / rate — whether or not earlier ones have answered, as k6's
 * constant-arrival-rate executor (and GitLab's Performance Tool) does. A closed loop (autocannon:
 * N connections, each waiting for its answer) slows down with the server and hides its queueing.
 *
 * Each request's time to first byte (TTFB: from when it was due to when the response's status line
 * and headers arrived) is recorded; the first request of an iteration is timed from the iteration's
 * scheduled start, so a late load generator or a full connection pool counts against the server,
 * not for it (no coordinated omission). Connections are kept alive and opened as needed (no cap):
 * when every open connection is busy, a due request opens a new one rather than wait.
 *
 * At most `maxInFlight` iterations run at once; one due beyond that is dropped and counted as a
 * failure (k6's dropped_iterations).
 */
const http = require('node:http');
const { performance } = require('node:perf_hooks');

/** One HTTP request: `{ status, ttfbMs, body? }`; `since` (performance.now() ms) is when it was due. */
function request(agent, base, { method = 'GET', path, headers = {}, body, collect = false, since, timeoutMs = 60_000 }) {
  const t0 = since ?? performance.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (r) => {
      if (!done) {
        done = true;
        resolve(r);
      }
    };
    const req = http.request(
      { agent, host: base.hostname, port: base.port, method, path, headers: body ? { 'content-length': Buffer.byteLength(body), ...headers } : headers },
      (res) => {
        const ttfbMs = performance.now() - t0;
        const chunks = [];
        res.on('data', (c) => {
          if (collect) chunks.push(c);
        });
        res.on('end', () => finish({ status: res.statusCode, ttfbMs, totalMs: performance.now() - t0, body: collect ? Buffer.concat(chunks) : undefined }));
        res.on('error', (e) => finish({ status: 0, ttfbMs, error: e.message }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => finish({ status: 0, ttfbMs: performance.now() - t0, error: e.message }));
    req.end(body);
  });
}

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Runs `iteration(dueAt)` at `rate` per second for `durationS` seconds. `iteration` resolves to
 * `{ ok: boolean, ttfbs: number[] }` (one TTFB per request it sent). Resolves, after every started
 * iteration has ended (or `graceS` after the schedule, when the rest count as failed), to the
 * run's figures.
 */
function runOpen({ rate, durationS, iteration, maxInFlight = 2000, graceS = 30 }) {
  const total = Math.max(1, Math.round(rate * durationS));
  const interval = 1000 / rate;
  const ttfbs = [];
  const errors = new Map();
  let ok = 0;
  let failed = 0;
  let dropped = 0;
  let inFlight = 0;
  let started = 0;
  let lastEnd = 0;
  let maxLagMs = 0;
  const t0 = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let graceTimer;
    const report = () => {
      if (settled) return;
      settled = true;
      clearTimeout(graceTimer);
      const unfinished = inFlight;
      const end = Math.max(lastEnd, t0 + durationS * 1000);
      const elapsedS = (end - t0) / 1000;
      ttfbs.sort((a, b) => a - b);
      const attempts = total;
      resolve({
        target_rate: rate,
        duration_s: durationS,
        iterations: attempts,
        ok,
        failed: failed + unfinished,
        dropped,
        unfinished,
        // completed iterations per second, over the schedule and the time it took to drain
        achieved_rate: ok / elapsedS,
        success_rate: ok / attempts,
        ttfb_p50_ms: percentile(ttfbs, 50),
        ttfb_p90_ms: percentile(ttfbs, 90),
        ttfb_p99_ms: percentile(ttfbs, 99),
        requests: ttfbs.length,
        max_schedule_lag_ms: maxLagMs,
        errors: Object.fromEntries(errors),
        elapsed_s: elapsedS,
      });
    };
    const ended = () => {
      lastEnd = performance.now();
      inFlight--;
      if (started === total && inFlight === 0) report();
    };
    const launch = (dueAt) => {
      if (inFlight >= maxInFlight) {
        dropped++;
        failed++;
        return;
      }
      inFlight++;
      Promise.resolve()
        .then(() => iteration(dueAt))
        .then(
          (r) => {
            for (const t of r.ttfbs) ttfbs.push(t);
            if (r.ok) ok++;
            else {
              failed++;
              const key = r.error || 'failed';
              errors.set(key, (errors.get(key) || 0) + 1);
            }
          },
          (e) => {
            failed++;
            const key = String(e && e.message ? e.message : e).slice(0, 120);
            errors.set(key, (errors.get(key) || 0) + 1);
          },
        )
        .finally(ended);
    };
    const tick = () => {
      const now = performance.now();
      while (started < total) {
        const due = t0 + started * interval;
        if (due > now) break;
        maxLagMs = Math.max(maxLagMs, now - due);
        started++;
        launch(due);
      }
      if (started < total) {
        setTimeout(tick, Math.max(0, Math.min(5, t0 + started * interval - performance.now())));
      } else if (inFlight === 0) {
        report();
      } else {
        graceTimer = setTimeout(report, Math.max(0, t0 + durationS * 1000 + graceS * 1000 - performance.now()));
      }
    };
    tick();
  });
}

module.exports = { request, runOpen, percentile };
