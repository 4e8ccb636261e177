import { Controller, Delete, Get, Header, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { ContentsService } from './contents.service';
import { ArchiveDto, BlobDto, CompareDto, DeleteFileDto, GetFileDto, TreeDto, WriteFileDto } from './dto/contents.dto';
import { presentCompare, presentContributor, presentFileWrite, presentRepositoryFile, presentTreeEntry } from './repo-api.presenter';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiBinaryResponse, ApiCreated, ApiPageResponse, ApiTextResponse } from '../openapi/response-types';
import { CompareResultResponse, ContributorResponse, FileCommitResponse, RepositoryFileResponse, TreeEntryResponse } from './repo-api.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(`${API}/projects/:id/repository`)
export class ContentsController {
  constructor(private readonly contents: ContentsService) {}

  @ApiPageResponse(TreeEntryResponse)
  @Get('tree')
  async tree(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: TreeDto) {
    return (await this.contents.tree(user, id, q)).map(presentTreeEntry);
  }

  /** Raw file bytes as `text/plain`, never sniffed or rendered by a browser. */
  @ApiTextResponse('raw file content')
  @Get('blobs/:sha')
  @Header('X-Content-Type-Options', 'nosniff')
  blob(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() q: BlobDto) {
    return this.contents.blobAt(user, id, sha, q);
  }

  @ApiTextResponse('raw file content')
  @Get('commits/:sha/blob')
  @Header('X-Content-Type-Options', 'nosniff')
  commitBlob(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() q: BlobDto) {
    return this.contents.blobAt(user, id, sha, q);
  }

  @ApiTextResponse('raw blob content')
  @Get('raw_blobs/:sha')
  @Header('X-Content-Type-Options', 'nosniff')
  rawBlob(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string) {
    return this.contents.rawBlob(user, id, sha);
  }

  @ApiOkResponse({ type: CompareResultResponse })
  @Get('compare')
  async compare(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: CompareDto) {
    return presentCompare(await this.contents.compare(user, id, q));
  }

  @ApiPageResponse(ContributorResponse)
  @Get('contributors')
  async contributors(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return (await this.contents.contributors(user, id, q)).map(presentContributor);
  }

  @ApiOkResponse({ type: RepositoryFileResponse })
  @Get('files')
  async file(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: GetFileDto) {
    return presentRepositoryFile(await this.contents.getFile(user, id, q));
  }

  @ApiCreated(FileCommitResponse)
  @Post('files')
  async createFile(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: WriteFileDto) {
    return presentFileWrite(await this.contents.createFile(user, id, dto));
  }

  @ApiOkResponse({ type: FileCommitResponse })
  @Put('files')
  async updateFile(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: WriteFileDto) {
    return presentFileWrite(await this.contents.updateFile(user, id, dto));
  }

  @ApiOkResponse({ type: FileCommitResponse })
  @Delete('files')
  async deleteFile(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: DeleteFileDto) {
    return presentFileWrite(await this.contents.deleteFile(user, id, dto));
  }

  /** `archive`, or `archive.<format>` (zip, tar, tar.gz, tgz, tar.bz2, ...), streamed. */
  @ApiBinaryResponse('archive of the tree (tar.gz unless the suffix names another format)')
  @Get(':archive')
  @Header('Content-Transfer-Encoding', 'binary')
  archive(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('archive') name: string, @Input() q: ArchiveDto) {
    return this.contents.archive(user, id, name, q);
  }
}
