import { Controller, Delete, Get, Param, Post, Put, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Admin, CurrentUser, Public } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Paginated } from '../common/pagination/pagination';
import { Input, Params } from '../common/params/params';
import { EmailsService } from './emails.service';
import { KeysService } from './keys.service';
import { SessionService } from './session.service';
import { User } from './user.entity';
import {
  presentEmail,
  presentKey,
  presentUserBasic,
  presentUserFor,
  presentUserFull,
  presentUserLogin,
} from './users.presenter';
import { UsersService } from './users.service';

@Controller(API)
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly keys: KeysService,
    private readonly emails: EmailsService,
    private readonly session: SessionService,
  ) {}

  // --- helpers that turn rows into views (no queries besides the cached settings) ---
  private async full(u: User) {
    const ctx = await this.users.presentContext();
    await this.users.loadFullView([u]);
    return presentUserFull(u, ctx, { canCreateProject: this.users.canCreateProject(u) });
  }

  private async login(u: User) {
    const ctx = await this.users.presentContext();
    await this.users.loadFullView([u]);
    return presentUserLogin(u, ctx, {
      canCreateProject: this.users.canCreateProject(u),
      privateToken: this.users.privateToken(u),
    });
  }

  // --- session ---
  @Public()
  @Post('session')
  async signIn(@Input() p: Params, @Req() req: Request) {
    const login = p.string('email', { required: false }) ?? p.string('login', { required: true });
    const user = await this.session.signIn(login as string, p.requireString('password'), req.ip ?? '');
    return this.login(user);
  }

  // --- users ---
  @Get('users')
  async list(@CurrentUser() viewer: User, @Input() p: Params) {
    const ctx = await this.users.presentContext();
    const result = await this.users.list(viewer, p);
    const view = (u: User) =>
      viewer.admin
        ? presentUserFull(u, ctx, { canCreateProject: this.users.canCreateProject(u) })
        : presentUserBasic(u, ctx);
    return result instanceof Paginated ? result.map(view) : result.map((u) => view(u));
  }

  @Get('users/:id')
  async show(@CurrentUser() viewer: User, @Param('id') id: string) {
    const user = await this.users.findById(id);
    if (viewer.admin) return this.full(user);
    return presentUserFor(viewer, user, await this.users.presentContext(), false);
  }

  @Admin()
  @Post('users')
  async create(@Input() p: Params) {
    return this.full(await this.users.create(p));
  }

  @Admin()
  @Put('users/:id')
  async update(@Param('id') id: string, @Input() p: Params) {
    return this.full(await this.users.update(id, p));
  }

  @Admin()
  @Delete('users/:id')
  async remove(@Param('id') id: string) {
    const user = await this.users.remove(id);
    return user ? this.full(user) : undefined;
  }

  @Admin()
  @Put('users/:id/block')
  block(@Param('id') id: string) {
    return this.users.block(id);
  }

  @Admin()
  @Put('users/:id/unblock')
  unblock(@Param('id') id: string) {
    return this.users.unblock(id);
  }

  @Get('user')
  me(@CurrentUser() user: User) {
    return this.login(user);
  }

  // --- SSH keys ---
  @Get('user/keys')
  async myKeys(@CurrentUser() user: User) {
    return (await this.keys.listFor(user)).map(presentKey);
  }

  @Get('user/keys/:id')
  async myKey(@CurrentUser() user: User, @Param('id') id: string) {
    return presentKey(await this.keys.getOwn(user, id));
  }

  @Post('user/keys')
  async addMyKey(@CurrentUser() user: User, @Input() p: Params) {
    return presentKey(await this.keys.add(user, p));
  }

  @Delete('user/keys/:id')
  async removeMyKey(@CurrentUser() user: User, @Param('id') id: string) {
    const key = await this.keys.removeOwn(user, id);
    return key ? presentKey(key) : undefined;
  }

  @Admin()
  @Get('users/:id/keys')
  async keysOf(@Param('id') id: string) {
    return (await this.keys.listFor(await this.users.findById(id))).map(presentKey);
  }

  @Admin()
  @Post('users/:id/keys')
  async addKeyTo(@Param('id') id: string, @Input() p: Params) {
    return presentKey(await this.keys.add(await this.users.findById(id), p));
  }

  @Admin()
  @Delete('users/:id/keys/:keyId')
  async removeKeyOf(@Param('id') id: string, @Param('keyId') keyId: string) {
    return presentKey(await this.keys.removeOf(await this.users.findById(id), keyId));
  }

  @Admin()
  @Get('keys/:id')
  async keyWithOwner(@Param('id') id: string) {
    const { key, user } = await this.keys.getWithOwner(id);
    return { ...presentKey(key), user: await this.full(user) };
  }

  // --- emails ---
  @Get('user/emails')
  async myEmails(@CurrentUser() user: User) {
    return (await this.emails.listFor(user)).map(presentEmail);
  }

  @Get('user/emails/:id')
  async myEmail(@CurrentUser() user: User, @Param('id') id: string) {
    return presentEmail(await this.emails.getOwn(user, id));
  }

  @Post('user/emails')
  async addMyEmail(@CurrentUser() user: User, @Input() p: Params) {
    return presentEmail(await this.emails.add(user, p));
  }

  @Delete('user/emails/:id')
  async removeMyEmail(@CurrentUser() user: User, @Param('id') id: string) {
    const email = await this.emails.removeOwn(user, id);
    return email ? presentEmail(email) : undefined;
  }

  @Admin()
  @Get('users/:id/emails')
  async emailsOf(@Param('id') id: string) {
    return (await this.emails.listFor(await this.users.findById(id))).map(presentEmail);
  }

  @Admin()
  @Post('users/:id/emails')
  async addEmailTo(@Param('id') id: string, @Input() p: Params) {
    return presentEmail(await this.emails.add(await this.users.findById(id), p));
  }

  @Admin()
  @Delete('users/:id/emails/:emailId')
  async removeEmailOf(@Param('id') id: string, @Param('emailId') emailId: string) {
    return presentEmail(await this.emails.removeOf(await this.users.findById(id), emailId));
  }
}
