import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../common/caller/caller';
import { DomainError } from '../common/errors/domain-errors';
import { logAtDebug } from '../common/http/http-pipeline';
import { Input } from '../common/params/params';
import { InfoRefsDto } from './dto/info-refs.dto';
import { GitHttpService } from './git-http.service';

/** Git smart HTTP at `/:namespace/:project(.git)`; it authenticates callers itself (HTTP Basic). */
@Public()
@Controller(':namespace/:repo')
export class GitHttpController {
  constructor(private readonly git: GitHttpService) {}

  @Get('info/refs')
  infoRefs(@Req() req: Request, @Res() res: Response, @Param('namespace') ns: string, @Param('repo') repo: string, @Input() q: InfoRefsDto) {
    return this.git.handle(req, res, ns, repo, 'info/refs', q.service).catch((e: unknown) => {
      // git's first request carries no credentials and gets the 401 challenge: routine, logged at debug
      if (!req.headers.authorization && e instanceof DomainError && e.status === 401) logAtDebug(req);
      throw e;
    });
  }

  @Post('git-upload-pack')
  uploadPack(@Req() req: Request, @Res() res: Response, @Param('namespace') ns: string, @Param('repo') repo: string) {
    return this.git.handle(req, res, ns, repo, 'git-upload-pack');
  }

  @Post('git-receive-pack')
  receivePack(@Req() req: Request, @Res() res: Response, @Param('namespace') ns: string, @Param('repo') repo: string) {
    return this.git.handle(req, res, ns, repo, 'git-receive-pack');
  }
}
