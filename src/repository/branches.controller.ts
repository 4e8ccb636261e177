import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { NotFound } from '../common/errors/domain-errors';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { BranchesService, BranchView } from './branches.service';
import { presentBranch } from './repository.presenter';

const view = (b: BranchView) => presentBranch(b.branch, b);
/** Branch names may contain `/`, sent raw or as `%2F`: the route takes the rest of the path. */
const joined = (parts: string | string[]) => (Array.isArray(parts) ? parts.join('/') : parts);

@Controller(`${API}/projects/:id/repository/branches`)
export class BranchesController {
  constructor(private readonly branches: BranchesService) {}

  @Get()
  async list(@CurrentUser() user: User, @Param('id') id: string) {
    return (await this.branches.list(user, id)).map(view);
  }

  @Post()
  async create(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return view(await this.branches.create(user, id, p));
  }

  @Get('*branch')
  async show(@CurrentUser() user: User, @Param('id') id: string, @Param('branch') branch: string | string[]) {
    return view(await this.branches.get(user, id, joined(branch)));
  }

  /** `PUT .../branches/:branch/protect` and `.../unprotect`. */
  @Put('*branch')
  async protect(@CurrentUser() user: User, @Param('id') id: string, @Param('branch') branch: string | string[], @Input() p: Params) {
    const path = joined(branch);
    const m = /^(.+)\/(protect|unprotect)$/.exec(path);
    if (!m) throw new NotFound();
    return view(await this.branches.setProtection(user, id, m[1], m[2] === 'protect', p));
  }

  @Delete('*branch')
  remove(@CurrentUser() user: User, @Param('id') id: string, @Param('branch') branch: string | string[]) {
    return this.branches.remove(user, id, joined(branch));
  }
}
