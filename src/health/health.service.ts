import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-errors';
import { HealthRepository } from './health.repository';

/** The GitLab version whose API this server speaks (config/version.ts, which builds' CI_SERVER_VERSION reads too). */
import { VERSION } from '../config/version';
export { VERSION };

export interface Readiness {
  database: 'ok' | 'failed';
}

/** Readiness failed: 503 with the checks, in the same shape as the 200 answer. */
export class NotReady extends DomainError {
  readonly status = 503;
  constructor(readonly checks: Readiness) {
    super('not ready');
  }
  body() {
    return { status: 'failed', checks: this.checks };
  }
}

@Injectable()
export class HealthService {
  constructor(private readonly health: HealthRepository) {}

  /** The checks when every one passes; NotReady (503) otherwise. */
  async readiness(): Promise<Readiness> {
    try {
      await this.health.ping();
    } catch {
      throw new NotReady({ database: 'failed' });
    }
    return { database: 'ok' };
  }

  version() {
    return VERSION;
  }
}
