import { Controller, Get, Req, StreamableFile } from '@nestjs/common';
import type { Request } from 'express';
import { Public } from '../common/caller/caller';
import { logAtDebug } from '../common/http/http-pipeline';
import { presentMetrics } from './metrics.presenter';
import { MetricsService } from './metrics.service';

/** Prometheus metrics, for loopback and METRICS_ALLOWED_IPS only (404 to everyone else, like GitLab's whitelist). */
@Controller('-/metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Public()
  @Get()
  async scrape(@Req() req: Request): Promise<StreamableFile> {
    const body = presentMetrics(await this.metrics.scrape(req.ip ?? req.socket.remoteAddress ?? ''));
    logAtDebug(req); // scraped every few seconds; a refused scrape (404, thrown above) stays at info
    return body;
  }
}
