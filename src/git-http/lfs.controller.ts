import { Controller, Get, Param, Post, Put, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../common/caller/caller';
import { LfsHttpService } from './lfs-http.service';

/**
 * Git LFS over HTTP as GitLab 8.17's routes (config/routes/git_http.rb): the batch API at
 * `/:namespace/:project.git/info/lfs/objects/batch` and the object store at
 * `/:namespace/:project.git/gitlab-lfs/objects/:oid[/:size]`. It authenticates callers itself (HTTP Basic).
 */
@Public()
@Controller(':namespace/:repo')
export class LfsController {
  constructor(private readonly lfs: LfsHttpService) {}

  @Post('info/lfs/objects/batch')
  batch(@Req() req: Request, @Res() res: Response, @Param('namespace') ns: string, @Param('repo') repo: string) {
    return this.lfs.batch(req, res, ns, repo);
  }

  /** 8.17's `deprecated` action: the pre-batch API (501). */
  @Post('info/lfs/objects')
  legacy(@Req() req: Request, @Param('namespace') ns: string, @Param('repo') repo: string) {
    return this.lfs.batchOnly(req, ns, repo);
  }

  @Get('info/lfs/objects/:oid')
  legacyObject(@Req() req: Request, @Param('namespace') ns: string, @Param('repo') repo: string) {
    return this.lfs.batchOnly(req, ns, repo);
  }

  @Get('gitlab-lfs/objects/:oid')
  download(@Req() req: Request, @Res() res: Response, @Param('namespace') ns: string, @Param('repo') repo: string, @Param('oid') oid: string) {
    return this.lfs.download(req, res, ns, repo, oid);
  }

  @Put('gitlab-lfs/objects/:oid/:size')
  upload(
    @Req() req: Request,
    @Res() res: Response,
    @Param('namespace') ns: string,
    @Param('repo') repo: string,
    @Param('oid') oid: string,
    @Param('size') size: string,
  ) {
    return this.lfs.upload(req, res, ns, repo, oid, size);
  }
}
