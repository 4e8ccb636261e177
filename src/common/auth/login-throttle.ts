import { Injectable } from '@nestjs/common';
import { TooManyRequests } from '../errors/domain-errors';

const MAX_FAILURES = 10;
const WINDOW_MS = 15 * 60 * 1000;
const MAX_ENTRIES = 50_000;

interface Entry {
  failures: number;
  firstAt: number;
  lockedUntil: number;
}

/**
 * Throttles password guessing: after 10 failed sign-ins for one (IP, login) within 15 minutes,
 * further attempts get 429 with Retry-After until the window ends. Kept in process memory: one
 * server process per deployment (the embedded database already implies it).
 */
@Injectable()
export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  private key(ip: string, login: string): string {
    return `${ip}\u0000${login.trim().toLowerCase()}`;
  }

  /** Throws 429 when the pair is locked out. */
  check(ip: string, login: string, now = Date.now()): void {
    const e = this.entries.get(this.key(ip, login));
    if (e && e.lockedUntil > now) throw new TooManyRequests(Math.ceil((e.lockedUntil - now) / 1000));
  }

  failed(ip: string, login: string, now = Date.now()): void {
    const key = this.key(ip, login);
    let e = this.entries.get(key);
    if (!e || now - e.firstAt > WINDOW_MS) e = { failures: 0, firstAt: now, lockedUntil: 0 };
    e.failures++;
    if (e.failures >= MAX_FAILURES) e.lockedUntil = e.firstAt + WINDOW_MS;
    this.entries.delete(key);
    this.entries.set(key, e);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }

  succeeded(ip: string, login: string): void {
    this.entries.delete(this.key(ip, login));
  }
}
