import { Controller, Get, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CurrentUser } from '../../common/auth/decorators';
import { API } from '../../common/http/routes';
import { Input } from '../../common/params/params';
import { ProjectViews } from '../../projects/project-views.service';
import { User } from '../../users/user.entity';
import { presentBuild } from './builds.presenter';
import { ListBuildsDto } from './dto/builds.dto';
import { ProjectBuildsService } from './project-builds.service';

/** `/api/v3/projects/:id/builds` and a commit's builds. */
@Controller(`${API}/projects/:id`)
export class BuildsController {
  constructor(
    private readonly builds: ProjectBuildsService,
    private readonly views: ProjectViews,
  ) {}

  @Get('builds')
  async list(@CurrentUser() user: User, @Param('id') id: string, @Input() q: ListBuildsDto) {
    const [page, ctx] = await Promise.all([this.builds.list(user, id, q), this.views.context()]);
    return page.map((v) => presentBuild(v, ctx));
  }

  @Get('repository/commits/:sha/builds')
  async forCommit(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() q: ListBuildsDto) {
    const [list, ctx] = await Promise.all([this.builds.listForCommit(user, id, sha, q), this.views.context()]);
    return list.map((v) => presentBuild(v, ctx));
  }

  @Get('builds/:buildId')
  async show(@CurrentUser() user: User, @Param('id') id: string, @Param('buildId') buildId: string) {
    return presentBuild(await this.builds.get(user, id, buildId), await this.views.context());
  }

  @Get('builds/:buildId/artifacts')
  async artifacts(@CurrentUser() user: User, @Param('id') id: string, @Param('buildId') buildId: string, @Res() res: Response) {
    const file = await this.builds.artifacts(user, id, buildId);
    res.status(200);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Disposition', `attachment; filename=${file.filename}`);
    res.setHeader('Content-Transfer-Encoding', 'binary');
    res.setHeader('Content-Length', String(file.size));
    file.stream.on('error', () => res.destroy());
    file.stream.pipe(res);
  }

  @Get('builds/:buildId/trace')
  async trace(@CurrentUser() user: User, @Param('id') id: string, @Param('buildId') buildId: string, @Res() res: Response) {
    const t = await this.builds.trace(user, id, buildId);
    res.status(200);
    res.setHeader('Content-Type', 'text/plain');
    res.setHeader('Content-Disposition', `infile; filename="${t.id}.log"`);
    t.stream.on('error', () => res.destroy());
    t.stream.pipe(res);
  }

  @Post('builds/:buildId/cancel')
  async cancel(@CurrentUser() user: User, @Param('id') id: string, @Param('buildId') buildId: string) {
    return presentBuild(await this.builds.cancel(user, id, buildId), await this.views.context());
  }

  @Post('builds/:buildId/retry')
  async retry(@CurrentUser() user: User, @Param('id') id: string, @Param('buildId') buildId: string) {
    return presentBuild(await this.builds.retry(user, id, buildId), await this.views.context());
  }

  @Post('builds/:buildId/erase')
  async erase(@CurrentUser() user: User, @Param('id') id: string, @Param('buildId') buildId: string) {
    return presentBuild(await this.builds.erase(user, id, buildId), await this.views.context(), { erased: true });
  }
}
