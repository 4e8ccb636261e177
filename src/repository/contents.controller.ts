import { Controller, Delete, Get, Header, Param, Post, Put } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { User } from '../users/user.entity';
import { ContentsService } from './contents.service';
import { ArchiveDto, BlobDto, CompareDto, DeleteFileDto, GetFileDto, TreeDto, WriteFileDto } from './dto/contents.dto';
import { presentCompare, presentContributor, presentFileWrite, presentRepositoryFile, presentTreeEntry } from './repository.presenter';

@Controller(`${API}/projects/:id/repository`)
export class ContentsController {
  constructor(private readonly contents: ContentsService) {}

  @Get('tree')
  async tree(@CurrentUser() user: User, @Param('id') id: string, @Input() q: TreeDto) {
    return (await this.contents.tree(user, id, q)).map(presentTreeEntry);
  }

  /** Raw file bytes as `text/plain`, never sniffed or rendered by a browser. */
  @Get('blobs/:sha')
  @Header('X-Content-Type-Options', 'nosniff')
  blob(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() q: BlobDto) {
    return this.contents.blobAt(user, id, sha, q);
  }

  @Get('commits/:sha/blob')
  @Header('X-Content-Type-Options', 'nosniff')
  commitBlob(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() q: BlobDto) {
    return this.contents.blobAt(user, id, sha, q);
  }

  @Get('raw_blobs/:sha')
  @Header('X-Content-Type-Options', 'nosniff')
  rawBlob(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string) {
    return this.contents.rawBlob(user, id, sha);
  }

  @Get('compare')
  async compare(@CurrentUser() user: User, @Param('id') id: string, @Input() q: CompareDto) {
    return presentCompare(await this.contents.compare(user, id, q));
  }

  @Get('contributors')
  async contributors(@CurrentUser() user: User, @Param('id') id: string, @Input() q: PaginationDto) {
    return (await this.contents.contributors(user, id, q)).map(presentContributor);
  }

  @Get('files')
  async file(@CurrentUser() user: User, @Param('id') id: string, @Input() q: GetFileDto) {
    return presentRepositoryFile(await this.contents.getFile(user, id, q));
  }

  @Post('files')
  async createFile(@CurrentUser() user: User, @Param('id') id: string, @Input() dto: WriteFileDto) {
    return presentFileWrite(await this.contents.createFile(user, id, dto));
  }

  @Put('files')
  async updateFile(@CurrentUser() user: User, @Param('id') id: string, @Input() dto: WriteFileDto) {
    return presentFileWrite(await this.contents.updateFile(user, id, dto));
  }

  @Delete('files')
  async deleteFile(@CurrentUser() user: User, @Param('id') id: string, @Input() dto: DeleteFileDto) {
    return presentFileWrite(await this.contents.deleteFile(user, id, dto));
  }

  /** `archive`, or `archive.<format>` (zip, tar, tar.gz, tgz, tar.bz2, ...), streamed. */
  @Get(':archive')
  @Header('Content-Transfer-Encoding', 'binary')
  archive(@CurrentUser() user: User, @Param('id') id: string, @Param('archive') name: string, @Input() q: ArchiveDto) {
    return this.contents.archive(user, id, name, q);
  }
}
