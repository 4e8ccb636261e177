import { Controller, Get, HttpCode } from '@nestjs/common';
import { Public } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { presentLiveness, presentReadiness, presentVersion } from './health.presenter';
import { HealthService } from './health.service';

export { VERSION } from './health.service';

@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('-/health')
  @HttpCode(200)
  liveness() {
    return presentLiveness();
  }

  /** Readiness: the database answers too (503 with the failed check otherwise). */
  @Public()
  @Get('-/readiness')
  async readiness() {
    return presentReadiness(await this.health.readiness());
  }

  /** The GitLab version whose API this server speaks. */
  @Get(`${API}/version`)
  version() {
    return presentVersion(this.health.version());
  }
}
