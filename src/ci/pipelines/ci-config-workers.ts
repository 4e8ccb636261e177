import { Injectable, OnModuleDestroy } from '@nestjs/common';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { TryAgainLater } from '../../common/errors/domain-errors';
import { Logger } from '../../common/logging/logger';
import { CiConfigError, CiConfigRequest, CiConfigResult, CiPlan } from './ci-config';

/** How long one `.gitlab-ci.yml` may take in its worker; past it the worker is terminated. */
export const CI_CONFIG_TIME_BUDGET_MS = 2000;
const POOL_SIZE = 2;
/** Lint and API requests waiting for a worker beyond this answer 503 (pushes always wait their turn). */
const MAX_WAITING = 64;
/** A worker's heap: a file that needs more is refused (the server's own heap is never at risk). */
const WORKER_HEAP_MB = 256;
/** Loading a worker (not counted in a request's budget); only a broken installation takes this long. */
const START_TIMEOUT_MS = 60_000;
/** A worker left idle this long ends (about 17 MB each); the next file starts one again (~0.1 s, off the event loop). */
const IDLE_MS = 120_000;

export const timeBudgetError = (ms: number) => `The .gitlab-ci.yml took more than ${ms / 1000} seconds to process`;
export const TIME_BUDGET_ERROR = timeBudgetError(CI_CONFIG_TIME_BUDGET_MS);
export const MEMORY_ERROR = 'The .gitlab-ci.yml needs too much memory to process';

/**
 * Under ts-jest the sources are TypeScript: the worker compiles them as it requires them, with the
 * `typescript` the tests already use, and keeps the output by the source's digest in
 * node_modules/.cache (loading `typescript` takes seconds on a busy machine; a cached start, tens of
 * milliseconds). The built server (`dist/`) starts the compiled worker directly.
 */
const TS_BOOTSTRAP = String.raw`'use strict';
const { workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const from = createRequire(workerData.file);
const tsPath = from.resolve('typescript');
const tsVersion = JSON.parse(fs.readFileSync(path.join(path.dirname(tsPath), '..', 'package.json'), 'utf8')).version;
const compilerOptions = { module: 'commonjs', target: 'es2022', esModuleInterop: true, inlineSourceMap: true };
const cache = path.join(tsPath.slice(0, tsPath.lastIndexOf('node_modules') + 'node_modules'.length), '.cache', 'ci-config-worker');
let ts;
require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const cached = path.join(cache, createHash('sha256').update([tsVersion, JSON.stringify(compilerOptions), filename, source].join('\0')).digest('hex') + '.js');
  let code;
  try {
    code = fs.readFileSync(cached, 'utf8');
  } catch {
    ts ??= from('typescript');
    code = ts.transpileModule(source, { fileName: filename, compilerOptions: ts.convertCompilerOptionsFromJson(compilerOptions).options }).outputText;
    try {
      fs.mkdirSync(cache, { recursive: true });
      const tmp = cached + '.' + process.pid + '.' + Date.now();
      fs.writeFileSync(tmp, code);
      fs.renameSync(tmp, cached);
    } catch {
      // only a cache: the next start compiles again
    }
  }
  module._compile(code, filename);
};
require(workerData.file);
`;

/**
 * A file refused for its time or memory, not for what it says: the same file may pass when the
 * machine is less busy (a pipeline's later stage retries rather than stopping).
 */
export class CiConfigBudgetError extends CiConfigError {}

type Result = CiConfigResult | { ok: false; error: string; budget: true };

interface Task {
  request: CiConfigRequest;
  resolve: (r: Result) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  startTimer?: NodeJS.Timeout;
  idleTimer?: NodeJS.Timeout;
  running?: { id: number; task: Task; timer: NodeJS.Timeout };
}

/**
 * `.gitlab-ci.yml` processing off the event loop (issue 36): parsing, validation and the plan of a
 * pipeline's builds run in a small pool of worker threads (`ci-config.worker.ts`, which calls
 * `processCiConfig`), reused across requests, so one user's file never stalls other requests. Each
 * request has a time budget; past it the worker is terminated (and replaced) and the file is refused
 * with timeBudgetError's text, as a file past the worker's heap is refused with MEMORY_ERROR. Requests
 * wait in order for a free worker; a worker idle for IDLE_MS ends.
 */
@Injectable()
export class CiConfigWorkers implements OnModuleDestroy {
  private readonly slots = new Set<Slot>();
  private readonly waiting: Task[] = [];
  private nextId = 1;
  private closed = false;
  /** CI_CONFIG_TIME_BUDGET_MS; a test lowers it to see a file refused. */
  timeBudgetMs = CI_CONFIG_TIME_BUDGET_MS;

  constructor(private readonly logger: Logger) {}

  /** `POST /ci/lint`: GitLab's validation message, or null when the file is valid. */
  async validationMessage(content: string): Promise<string | null> {
    const r = await this.run({ content }, true);
    return r.ok ? null : r.error;
  }

  /**
   * Every error of the file (`CiConfig.allErrors`: none when it is valid), for a push's `remote:`
   * lines; undefined when it was refused for its time or memory (the pipeline says so). An
   * interactive request: refused (TryAgainLater) rather than waiting behind a long queue.
   */
  async allErrors(content: string): Promise<string[] | undefined> {
    const r = await this.run({ content, all: true }, true);
    if (r.ok) return [];
    return 'budget' in r ? undefined : (r.errors ?? [r.error]);
  }

  /**
   * The builds of the file for a ref, grouped by stage; throws CiConfigError with the reason when the
   * file is refused. `interactive` (an API request): 503 rather than waiting behind a long queue.
   */
  async plan(request: CiConfigRequest & { ref: NonNullable<CiConfigRequest['ref']> }, interactive = false): Promise<CiPlan> {
    const r = await this.run(request, interactive);
    if (!r.ok) throw 'budget' in r ? new CiConfigBudgetError(r.error) : new CiConfigError(r.error);
    return r.plan ?? { stages: [], builds: [] };
  }

  run(request: CiConfigRequest, interactive: boolean): Promise<Result> {
    if (this.closed) return Promise.reject(new TryAgainLater('The server is shutting down'));
    if (interactive && this.waiting.length >= MAX_WAITING) {
      return Promise.reject(new TryAgainLater('The .gitlab-ci.yml checker is busy; try again'));
    }
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  onModuleDestroy(): void {
    this.closed = true;
    for (const slot of [...this.slots]) this.drop(slot);
    for (const task of this.waiting.splice(0)) task.reject(new TryAgainLater('The server is shutting down'));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.running) continue;
      const task = this.waiting.shift();
      if (task) this.assign(slot, task);
      else if (!slot.idleTimer) {
        slot.idleTimer = setTimeout(() => this.drop(slot), IDLE_MS);
        slot.idleTimer.unref();
      }
    }
    const starting = [...this.slots].filter((s) => !s.ready).length;
    while (this.waiting.length > starting && this.slots.size < POOL_SIZE && !this.closed) this.start();
  }

  private assign(slot: Slot, task: Task): void {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    const id = this.nextId++;
    const timer = setTimeout(() => this.timedOut(slot), this.timeBudgetMs);
    slot.running = { id, task, timer };
    slot.worker.postMessage({ id, request: task.request });
  }

  private start(): void {
    const file = path.join(__dirname, `ci-config.worker${path.extname(__filename)}`);
    const options = { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } };
    const worker = file.endsWith('.ts') ? new Worker(TS_BOOTSTRAP, { ...options, eval: true, workerData: { file } }) : new Worker(file, options);
    worker.unref(); // an idle pool never keeps the process alive
    const slot: Slot = { worker, ready: false };
    slot.startTimer = setTimeout(() => this.failed(slot, new Error(`the worker did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    slot.startTimer.unref();
    this.slots.add(slot);
    worker.on('message', (m: { ready?: boolean; id?: number; result?: CiConfigResult; crash?: string }) => {
      if (m.ready) {
        clearTimeout(slot.startTimer);
        slot.ready = true;
        this.dispatch();
        return;
      }
      const running = slot.running;
      if (!running || running.id !== m.id) return;
      clearTimeout(running.timer);
      slot.running = undefined;
      if (m.result) running.task.resolve(m.result);
      else running.task.reject(new Error(`.gitlab-ci.yml processing failed: ${m.crash}`));
      this.dispatch();
    });
    worker.on('error', (e) => this.failed(slot, e));
    worker.on('exit', (code) => this.failed(slot, new Error(`the worker exited with code ${code}`)));
  }

  /** The running file took too long: the worker is terminated and the file refused. */
  private timedOut(slot: Slot): void {
    const running = slot.running;
    if (!running || !this.slots.has(slot)) return;
    slot.running = undefined;
    this.drop(slot);
    this.logger.warn('.gitlab-ci.yml processing took longer than its budget: worker terminated, file refused', {
      budget_ms: this.timeBudgetMs,
      bytes: Buffer.byteLength(running.task.request.content, 'utf8'),
    });
    running.task.resolve({ ok: false, error: timeBudgetError(this.timeBudgetMs), budget: true });
    this.dispatch();
  }

  /** A worker died (out of memory, a defect) or could not start. */
  private failed(slot: Slot, e: Error): void {
    if (!this.slots.has(slot)) return;
    const running = slot.running;
    slot.running = undefined;
    this.drop(slot);
    if (this.closed) return;
    if ((e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      this.logger.warn('.gitlab-ci.yml processing ran out of its worker heap: file refused', { heap_mb: WORKER_HEAP_MB });
      running?.task.resolve({ ok: false, error: MEMORY_ERROR, budget: true });
    } else {
      this.logger.error('.gitlab-ci.yml worker failed', { error: e.message, starting: !slot.ready });
      running?.task.reject(e);
      // a worker that cannot start fails what waits for it rather than being restarted in a loop
      if (!slot.ready) for (const task of this.waiting.splice(0)) task.reject(e);
    }
    this.dispatch();
  }

  private drop(slot: Slot): void {
    this.slots.delete(slot);
    clearTimeout(slot.startTimer);
    clearTimeout(slot.idleTimer);
    if (slot.running) clearTimeout(slot.running.timer);
    slot.worker.removeAllListeners('exit');
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate();
  }
}
