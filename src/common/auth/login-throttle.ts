import { Injectable } from '@nestjs/common';
import { SecretsService } from '../crypto/secrets.service';
import { TooManyRequests } from '../errors/domain-errors';
import { LoginAttemptsRepository } from './login-attempts.repository';

const MAX_FAILURES = 10;
const WINDOW_SECONDS = 15 * 60;

/**
 * Throttles password guessing: after 10 failed sign-ins for one (IP, login) within 15 minutes,
 * further attempts get 429 with Retry-After until the window ends. Counted in the database, so that
 * every app instance behind the load balancer, and a restart, see the same count. Keys are keyed
 * digests: no IP address or login is stored in clear.
 */
@Injectable()
export class LoginThrottle {
  private failuresSincePrune = 0;

  constructor(
    private readonly attempts: LoginAttemptsRepository,
    private readonly secrets: SecretsService,
  ) {}

  private key(ip: string, login: string): string {
    return this.secrets.digest(`login-throttle\u0000${ip}\u0000${login.trim().toLowerCase()}`);
  }

  /** Throws 429 when any of the (IP, login) pairs is locked out. */
  async check(ip: string, ...logins: string[]): Promise<void> {
    const seconds = await this.attempts.lockedFor(logins.map((l) => this.key(ip, l)));
    if (seconds > 0) throw new TooManyRequests(seconds);
  }

  async failed(ip: string, ...logins: string[]): Promise<void> {
    await this.attempts.failed(
      logins.map((l) => this.key(ip, l)),
      MAX_FAILURES,
      WINDOW_SECONDS,
    );
    if (++this.failuresSincePrune >= 1000) {
      this.failuresSincePrune = 0;
      await this.attempts.prune(WINDOW_SECONDS);
    }
  }

  async succeeded(ip: string, ...logins: string[]): Promise<void> {
    await this.attempts.clear(logins.map((l) => this.key(ip, l)));
  }
}
