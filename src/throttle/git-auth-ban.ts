import { Inject, Injectable } from '@nestjs/common';
import { LoginAttemptsRepository } from './login-attempts.repository';
import { SecretsService } from '../common/crypto/secrets.service';
import { APP_CONFIG, AppConfig } from '../config/config';

/**
 * GitLab 8's `rack_attack.git_basic_auth`: an IP that fails HTTP Basic authentication for git
 * `GIT_AUTH_BAN_MAX_RETRY` times (10) within `GIT_AUTH_BAN_FIND_TIME` seconds (60) is banned from git
 * over HTTP for `GIT_AUTH_BAN_TIME` seconds (3600), whatever credentials it sends meanwhile (403). A
 * successful authentication forgets the failures counted so far (git clients try without a password
 * first), never a ban in force. Counted in the database (table `login_attempts`, keyed digests of
 * the IP), so that every instance sees the same count; whitelisted IPs are never counted.
 */
@Injectable()
export class GitAuthBan {
  private attemptsSincePrune = 0;

  constructor(
    private readonly attempts: LoginAttemptsRepository,
    private readonly secrets: SecretsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get settings() {
    return this.config.gitAuthBan;
  }

  private applies(ip: string): boolean {
    return this.settings.maxRetry > 0 && !this.settings.ipWhitelist.includes(ip);
  }

  private key(ip: string): string {
    return this.secrets.digest(`git-auth-ban\u0000${ip}`);
  }

  /** Whether `ip` is banned now. */
  async banned(ip: string): Promise<boolean> {
    if (!this.applies(ip)) return false;
    return (await this.attempts.lockedFor([this.key(ip)])) > 0;
  }

  /**
   * Reserves one authentication attempt for `ip` before its credentials are checked, atomically
   * across concurrent requests and instances; false when `ip` has no attempt left in its window
   * (at most `GIT_AUTH_BAN_MAX_RETRY` credentials are ever checked) or is banned.
   */
  async reserve(ip: string): Promise<boolean> {
    if (!this.applies(ip)) return true;
    const s = this.settings;
    const refused = await this.attempts.reserve([this.key(ip)], s.maxRetry, s.findTimeSeconds);
    if (++this.attemptsSincePrune >= 1000) {
      this.attemptsSincePrune = 0;
      await this.attempts.prune(Math.max(s.findTimeSeconds, 15 * 60));
    }
    return refused.length === 0;
  }

  /** The reserved attempt failed: an IP that has used up its attempts is banned. */
  async failed(ip: string): Promise<void> {
    if (!this.applies(ip)) return;
    const s = this.settings;
    await this.attempts.failed([this.key(ip)], s.maxRetry, s.findTimeSeconds, s.banTimeSeconds);
  }

  async succeeded(ip: string): Promise<void> {
    if (!this.applies(ip)) return;
    await this.attempts.forgetFailures([this.key(ip)]);
  }
}
