import { maskSecrets } from './build-files';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { promises as fs } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { DbNotifications } from '../../database/notifications';
import { BuildRow, BuildsRepository } from './builds.repository';
import { BuildsService, TRACE_CHANNEL } from './builds.service';

/** Safety re-check of a followed build (a lost notification costs at most this much delay). */
export const TRACE_RECHECK_MS = 2000;
const READ_CHUNK = 64 * 1024;

/** Where a follow sends its events; `closed` tells it the client went away. */
export interface TraceSink {
  event(name: 'trace' | 'end', data: unknown): void;
  readonly closed: boolean;
}

/**
 * Live traces: a follower sends what the trace file holds beyond what it already sent, each time the
 * runner API signals an append or a state change of that build (PostgreSQL NOTIFY, so appends through
 * any instance reach followers on every instance), and on a slow safety timer. It ends when the build
 * is finished and everything is sent, or when the client goes away (nothing is held then).
 */
@Injectable()
export class TraceFollower implements OnModuleInit {
  private readonly waiting = new Map<number, Set<() => void>>();

  constructor(
    private readonly notifications: DbNotifications,
    private readonly repo: BuildsRepository,
    private readonly builds: BuildsService,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.notifications.listen(TRACE_CHANNEL, (payload) => {
      if (payload === '') {
        for (const set of this.waiting.values()) for (const wake of set) wake();
        return;
      }
      const set = this.waiting.get(Number(payload));
      if (set) for (const wake of set) wake();
    });
  }

  /** Followers currently waiting (for tests and metrics). */
  get followers(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }

  /**
   * Streams the trace of `build` into `sink` until the build finishes or `stop` resolves.
   * `secrets` are masked across part boundaries, as in the plain trace.
   */
  async follow(build: BuildRow, secrets: string[], sink: TraceSink, stop: Promise<void>): Promise<void> {
    const mask = new LiveMask(secrets);
    const decoder = new StringDecoder('utf8');
    const emit = (chunk: Buffer) => {
      const text = decoder.write(chunk);
      if (text && !sink.closed) sink.event('trace', { text });
    };
    let sent = 0;
    let stopped = false;
    let wake: () => void = () => undefined;
    let pending = true; // check once at the start
    const wakeUp = () => {
      pending = true;
      wake();
    };
    let set = this.waiting.get(build.id);
    if (!set) this.waiting.set(build.id, (set = new Set()));
    set.add(wakeUp);
    const timer = setInterval(wakeUp, TRACE_RECHECK_MS);
    timer.unref();
    void stop.then(() => {
      stopped = true;
      wake();
    });
    try {
      for (;;) {
        if (stopped || sink.closed) return;
        if (!pending) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        pending = false;
        const row = await this.repo.find(build.id);
        if (!row) break;
        const size = row.erasedAt ? 0 : row.traceSize;
        if (size > sent) {
          sent = await this.send(
            build.id,
            sent,
            size,
            (buf) => emit(mask.push(buf)),
            () => stopped || sink.closed,
          );
        }
        if (this.builds.isFinished(row.status) && sent >= size) break;
      }
      emit(mask.flush());
      const rest = decoder.end();
      if (!sink.closed) {
        if (rest) sink.event('trace', { text: rest });
        const row = await this.repo.find(build.id);
        sink.event('end', { status: row?.status ?? null });
      }
    } finally {
      clearInterval(timer);
      set.delete(wakeUp);
      if (set.size === 0 && this.waiting.get(build.id) === set) this.waiting.delete(build.id);
    }
  }

  /** Reads bytes [from, to) of the trace file into the mask; returns how far it got. */
  private async send(id: number, from: number, to: number, out: (buf: Buffer) => void, cancelled: () => boolean): Promise<number> {
    const fh = await fs.open(this.builds.files.tracePath(id), 'r').catch(() => null);
    if (!fh) return from;
    let at = from;
    try {
      while (at < to && !cancelled()) {
        const buf = Buffer.alloc(Math.min(READ_CHUNK, to - at));
        const { bytesRead } = await fh.read(buf, 0, buf.length, at);
        if (bytesRead === 0) break;
        at += bytesRead;
        out(buf.subarray(0, bytesRead));
      }
    } finally {
      await fh.close();
    }
    return at;
  }
}

/**
 * Masks secrets in a growing byte stream without delaying it: only a tail that could be the start of
 * a secret is held back until the next part (or the end) shows whether it is one.
 */
export class LiveMask {
  private carry: Buffer = Buffer.alloc(0);
  private readonly needles: Buffer[];

  constructor(secrets: string[]) {
    this.needles = secrets.filter((s) => s.length > 0).map((s) => Buffer.from(s, 'utf8'));
  }

  push(part: Buffer): Buffer {
    const data = this.mask(Buffer.concat([this.carry, part]));
    let hold = 0;
    for (const n of this.needles) {
      for (let k = Math.min(n.length - 1, data.length); k > hold; k--) {
        if (data.subarray(data.length - k).equals(n.subarray(0, k))) {
          hold = k;
          break;
        }
      }
    }
    this.carry = data.subarray(data.length - hold);
    return data.subarray(0, data.length - hold);
  }

  flush(): Buffer {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    return rest;
  }

  private mask(buf: Buffer): Buffer {
    return maskSecrets(buf, this.needles);
  }
}
