import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../common/auth/decorators';
import { API } from '../common/http/routes';

export const VERSION = { version: '8.8.0', revision: process.env.GIT_REVISION || 'unknown' };

@Controller()
export class HealthController {
  constructor(private readonly ds: DataSource) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('-/health')
  @HttpCode(200)
  health() {
    return { status: 'ok' };
  }

  /** Readiness: the database answers too. */
  @Public()
  @Get('-/readiness')
  async readiness(@Res({ passthrough: true }) res: Response) {
    try {
      await this.ds.query('SELECT 1');
      return { status: 'ok', checks: { database: 'ok' } };
    } catch {
      res.status(503);
      return { status: 'failed', checks: { database: 'failed' } };
    }
  }

  /** The GitLab version whose API this server speaks. */
  @Get(`${API}/version`)
  version() {
    return VERSION;
  }
}
