import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Caller, CurrentUser, Public } from '../../common/caller/caller';
import { Input } from '../../common/params/params';
import { BadgesService } from './badges.service';
import { BadgeDto } from './dto/badges.dto';

/**
 * 8.17's no-cache headers (ApplicationController#no_cache_headers), and a policy under which the SVG,
 * served from the API's origin, can run nothing and load nothing (user content never runs there).
 */
const BADGE_HEADERS: Record<string, string> = {
  'Content-Type': 'image/svg+xml; charset=utf-8',
  'Cache-Control': 'no-cache, no-store, max-age=0, must-revalidate',
  Pragma: 'no-cache',
  Expires: 'Fri, 01 Jan 1990 00:00:00 GMT',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  'X-Content-Type-Options': 'nosniff',
};

/**
 * `/:namespace/:project/badges/:ref/build.svg` and `coverage.svg` (GitLab 8.17's badges, at the site
 * root like git's HTTP routes). `@Public()`: a private token is still read, and an invisible project is
 * 404 for anyone, signed in or not.
 */
@Public()
@Controller(':namespace/:project/badges')
export class BadgesController {
  constructor(private readonly badges: BadgesService) {}

  /** The ref may contain `/` (raw or `%2F`): the route takes the rest of the path and ends in the badge's name. */
  @Get('*path')
  async badge(
    @CurrentUser() user: Caller | undefined,
    @Param('namespace') namespace: string,
    @Param('project') project: string,
    @Param('path') path: string | string[],
    @Input() q: BadgeDto,
    @Res() res: Response,
  ): Promise<void> {
    const svg = await this.badges.badge(user, namespace, project, Array.isArray(path) ? path.join('/') : path, q.job);
    for (const [k, v] of Object.entries(BADGE_HEADERS)) res.setHeader(k, v);
    res.setHeader('Content-Length', Buffer.byteLength(svg));
    res.status(200).end(res.req.method === 'HEAD' ? undefined : svg);
  }
}
