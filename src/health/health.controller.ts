import { Controller, Get, HttpCode, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Public } from '../common/caller/caller';
import { logAtDebug } from '../common/http/http-pipeline';
import { API } from '../common/http/routes';
import { presentLiveness, presentReadiness, presentVersion } from './health.presenter';
import { HealthService } from './health.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { VersionResponse } from './version.responses';

export { VERSION } from './health.service';

@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('-/health')
  @HttpCode(200)
  liveness(@Req() req: Request) {
    logAtDebug(req); // probed every few seconds by orchestrators
    return presentLiveness();
  }

  /** Readiness: the database answers too (503 with the failed check otherwise). */
  @Public()
  @Get('-/readiness')
  async readiness(@Req() req: Request) {
    const body = presentReadiness(await this.health.readiness());
    logAtDebug(req); // a ready answer is routine; a 503 (thrown above) stays at info
    return body;
  }

  /** The GitLab version whose API this server speaks. */
  @ApiOkResponse({ type: VersionResponse })
  @Get(`${API}/version`)
  version() {
    return presentVersion(this.health.version());
  }
}
