import { Controller, Delete, Get, Param, Post, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CurrentUser } from '../common/auth/decorators';
import { NotFound } from '../common/errors/domain-errors';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { ContentsService } from './contents.service';
import { presentCommit, presentDiff, presentTreeEntry } from './repository.presenter';

/** Raw file bytes: `text/plain` (GitLab's blob answer); never sniffed or rendered by a browser. */
function sendRaw(res: Response, data: Buffer): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', data.length);
  res.end(data);
}

@Controller(`${API}/projects/:id/repository`)
export class ContentsController {
  constructor(private readonly contents: ContentsService) {}

  @Get('tree')
  async tree(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return (await this.contents.tree(user, id, p)).map(presentTreeEntry);
  }

  @Get('blobs/:sha')
  async blob(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() p: Params, @Res() res: Response) {
    sendRaw(res, await this.contents.blobAt(user, id, sha, p));
  }

  @Get('commits/:sha/blob')
  async commitBlob(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() p: Params, @Res() res: Response) {
    sendRaw(res, await this.contents.blobAt(user, id, sha, p));
  }

  @Get('raw_blobs/:sha')
  async rawBlob(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Res() res: Response) {
    sendRaw(res, await this.contents.rawBlob(user, id, sha));
  }

  @Get('compare')
  async compare(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    const r = await this.contents.compare(user, id, p);
    return {
      commit: r.commit ? presentCommit(r.commit) : null,
      commits: r.commits.map(presentCommit),
      diffs: r.diffs.map(presentDiff),
      compare_timeout: r.compareTimeout,
      compare_same_ref: r.compareSameRef,
    };
  }

  @Get('contributors')
  async contributors(@CurrentUser() user: User, @Param('id') id: string) {
    return (await this.contents.contributors(user, id)).map((c) => ({ ...c, additions: 0, deletions: 0 }));
  }

  @Get('files')
  async file(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    const f = await this.contents.getFile(user, id, p);
    return {
      file_name: f.fileName,
      file_path: f.filePath,
      size: f.size,
      encoding: 'base64',
      content: f.content.toString('base64'),
      ref: f.ref,
      blob_id: f.blobId,
      commit_id: f.commitId,
      last_commit_id: f.lastCommitId,
    };
  }

  @Post('files')
  createFile(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return this.contents.writeFile(user, id, p, 'create');
  }

  @Put('files')
  updateFile(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return this.contents.writeFile(user, id, p, 'update');
  }

  @Delete('files')
  deleteFile(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return this.contents.writeFile(user, id, p, 'delete');
  }

  /** `archive`, or `archive.<format>` (zip, tar, tar.gz, tgz, tar.bz2, ...). */
  @Get(':archive')
  async archive(@CurrentUser() user: User, @Param('id') id: string, @Param('archive') name: string, @Input() p: Params, @Res() res: Response) {
    const m = /^archive(?:\.(.+))?$/.exec(name);
    if (!m) throw new NotFound();
    await this.contents.archive(user, id, p, m[1], res);
  }
}
