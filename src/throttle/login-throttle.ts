import { Injectable } from '@nestjs/common';
import { SecretsService } from '../common/crypto/secrets.service';
import { TooManyRequests } from '../common/errors/domain-errors';
import { LoginAttemptsRepository } from './login-attempts.repository';

const MAX_FAILURES = 10;
const WINDOW_SECONDS = 15 * 60;

/**
 * Throttles password guessing: at most 10 sign-in attempts for one (IP, login) within 15 minutes
 * have their password checked (a success starts afresh); further attempts get 429 with Retry-After
 * until the window ends. Counted in the database, so that
 * every app instance behind the load balancer, and a restart, see the same count. Keys are keyed
 * digests: no IP address or login is stored in clear.
 */
@Injectable()
export class LoginThrottle {
  private attemptsSincePrune = 0;

  constructor(
    private readonly attempts: LoginAttemptsRepository,
    private readonly secrets: SecretsService,
  ) {}

  private key(ip: string, login: string): string {
    return this.secrets.digest(`login-throttle\u0000${ip}\u0000${login.trim().toLowerCase()}`);
  }

  /**
   * Reserves this attempt for every (IP, login) pair before the password is checked, atomically
   * across concurrent requests and instances: at most 10 attempts per window are ever checked.
   * Throws 429 (saying until when the login is locked) when any pair has no attempt left.
   */
  async reserve(ip: string, ...logins: string[]): Promise<void> {
    const keys = [...new Set(logins.map((l) => this.key(ip, l)))];
    const refused = await this.attempts.reserve(keys, MAX_FAILURES, WINDOW_SECONDS);
    if (++this.attemptsSincePrune >= 1000) {
      this.attemptsSincePrune = 0;
      await this.attempts.prune(WINDOW_SECONDS);
    }
    if (refused.length === 0) return;
    const granted = keys.filter((k) => !refused.includes(k));
    if (granted.length > 0) await this.attempts.release(granted);
    const { until, seconds } = await this.attempts.refusedUntil(refused, WINDOW_SECONDS);
    throw new TooManyRequests(seconds, `this login is locked after too many failed sign-ins until ${until.toUTCString()} (${until.toISOString()})`);
  }

  /** The reserved attempt failed: a pair that has used up its attempts is locked until its window ends. */
  async failed(ip: string, ...logins: string[]): Promise<void> {
    await this.attempts.failed(
      logins.map((l) => this.key(ip, l)),
      MAX_FAILURES,
      WINDOW_SECONDS,
    );
  }

  async succeeded(ip: string, ...logins: string[]): Promise<void> {
    await this.attempts.clear(logins.map((l) => this.key(ip, l)));
  }
}
