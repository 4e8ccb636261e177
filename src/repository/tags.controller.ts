import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { NotFound } from '../common/errors/domain-errors';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { presentTag } from './repository.presenter';
import { TagsService } from './tags.service';

const joined = (parts: string | string[]) => (Array.isArray(parts) ? parts.join('/') : parts);
const RELEASE = /^(.+)\/release$/;

@Controller(`${API}/projects/:id/repository/tags`)
export class TagsController {
  constructor(private readonly tags: TagsService) {}

  @Get()
  async list(@CurrentUser() user: User, @Param('id') id: string) {
    return (await this.tags.list(user, id)).map((t) => presentTag(t.tag, t.release));
  }

  @Post()
  async create(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    const t = await this.tags.create(user, id, p);
    return presentTag(t.tag, t.release);
  }

  @Get('*tag')
  async show(@CurrentUser() user: User, @Param('id') id: string, @Param('tag') tag: string | string[]) {
    const t = await this.tags.get(user, id, joined(tag));
    return presentTag(t.tag, t.release);
  }

  /** `POST .../tags/:tag/release`. */
  @Post('*tag')
  async createRelease(@CurrentUser() user: User, @Param('id') id: string, @Param('tag') tag: string | string[], @Input() p: Params) {
    const m = RELEASE.exec(joined(tag));
    if (!m) throw new NotFound();
    const r = await this.tags.createRelease(user, id, m[1], p);
    return { tag_name: r.tag, description: r.description };
  }

  /** `PUT .../tags/:tag/release`. */
  @Put('*tag')
  async updateRelease(@CurrentUser() user: User, @Param('id') id: string, @Param('tag') tag: string | string[], @Input() p: Params) {
    const m = RELEASE.exec(joined(tag));
    if (!m) throw new NotFound();
    const r = await this.tags.updateRelease(user, id, m[1], p);
    return { tag_name: r.tag, description: r.description };
  }

  @Delete('*tag')
  remove(@CurrentUser() user: User, @Param('id') id: string, @Param('tag') tag: string | string[]) {
    return this.tags.remove(user, id, joined(tag));
  }
}
