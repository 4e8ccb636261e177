import { Controller, Delete, Get, Param, Post, Put, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Admin, CurrentUser, Public } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { IdParam, Input } from '../common/params/params';
import { CreateEmailDto } from './dto/email.dto';
import { CreateKeyDto } from './dto/key.dto';
import { CreateUserDto, ListUsersDto, SignInDto, UpdateUserDto } from './dto/user.dto';
import { EmailsService } from './emails.service';
import { KeysService } from './keys.service';
import { SessionService } from './session.service';
import { User } from './user.entity';
import { presentEmail, presentKey, presentKeyWithOwner, presentUserView, presentUserViews } from './users.presenter';
import { UsersService } from './users.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiOneOfResponse, ApiPageOneOfResponse, ApiPageResponse, ApiTrueResponse } from '../openapi/response-types';
import { EmailResponse, SSHKeyResponse, SSHKeyWithUserResponse, UserBasicResponse, UserFullResponse, UserLoginResponse, UserResponse } from './users.responses';

/**
 * Users, the session, SSH keys and emails. Which view of a user a caller gets is the services'
 * choice (UserViews); administrator-only routes say `@Admin()`.
 */
@Controller(API)
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly keys: KeysService,
    private readonly emails: EmailsService,
    private readonly session: SessionService,
  ) {}

  // --- session ---
  @Public()
  @ApiCreated(UserLoginResponse)
  @Post('session')
  async signIn(@Input() dto: SignInDto, @Req() req: Request) {
    return presentUserView(await this.session.create(dto, req.ip ?? ''));
  }

  // --- users ---
  @ApiPageOneOfResponse(
    [UserBasicResponse, UserFullResponse],
    'user summaries; the administrator view for administrators. `username=` answers one user at most.',
  )
  @Get('users')
  async list(@CurrentUser() viewer: User, @Input() q: ListUsersDto) {
    return presentUserViews(await this.users.list(viewer, q));
  }

  @ApiOneOfResponse([UserResponse, UserFullResponse], 'the administrator view for administrators')
  @Get('users/:id')
  async show(@CurrentUser() viewer: User, @Param('id', IdParam) id: number) {
    return presentUserView(await this.users.show(viewer, id));
  }

  @Admin()
  @ApiCreated(UserFullResponse)
  @Post('users')
  async create(@Input() dto: CreateUserDto) {
    return presentUserView(await this.users.create(dto));
  }

  @Admin()
  @ApiOkResponse({ type: UserFullResponse })
  @Put('users/:id')
  async update(@Param('id', IdParam) id: number, @Input() dto: UpdateUserDto) {
    return presentUserView(await this.users.update(id, dto));
  }

  /** 200 with the deleted user, or 200 with no body when there is none. */
  @Admin()
  @ApiOkResponse({ type: UserFullResponse, description: 'the deleted user; an empty body when the user did not exist' })
  @Delete('users/:id')
  async remove(@Param('id', IdParam) id: number) {
    const deleted = await this.users.remove(id);
    return deleted && presentUserView(deleted);
  }

  @Admin()
  @ApiTrueResponse()
  @Put('users/:id/block')
  block(@Param('id', IdParam) id: number) {
    return this.users.block(id);
  }

  @Admin()
  @ApiTrueResponse()
  @Put('users/:id/unblock')
  unblock(@Param('id', IdParam) id: number) {
    return this.users.unblock(id);
  }

  @ApiOkResponse({ type: UserLoginResponse })
  @Get('user')
  async me(@CurrentUser() user: User) {
    return presentUserView(await this.users.me(user));
  }

  // --- SSH keys ---
  @ApiPageResponse(SSHKeyResponse)
  @Get('user/keys')
  async myKeys(@CurrentUser() user: User, @Input() q: PaginationDto) {
    return (await this.keys.listOwn(user, q)).map(presentKey);
  }

  @ApiOkResponse({ type: SSHKeyResponse })
  @Get('user/keys/:id')
  async myKey(@CurrentUser() user: User, @Param('id', IdParam) id: number) {
    return presentKey(await this.keys.getOwn(user, id));
  }

  @ApiCreated(SSHKeyResponse)
  @Post('user/keys')
  async addMyKey(@CurrentUser() user: User, @Input() dto: CreateKeyDto) {
    return presentKey(await this.keys.addOwn(user, dto));
  }

  /** Always 200: the deleted key, or no body. */
  @ApiOkResponse({ type: SSHKeyResponse, description: 'the deleted key; an empty body when it did not exist' })
  @Delete('user/keys/:id')
  async removeMyKey(@CurrentUser() user: User, @Param('id', IdParam) id: number) {
    const key = await this.keys.removeOwn(user, id);
    return key && presentKey(key);
  }

  @Admin()
  @ApiPageResponse(SSHKeyResponse)
  @Get('users/:id/keys')
  async keysOf(@Param('id', IdParam) id: number, @Input() q: PaginationDto) {
    return (await this.keys.listOf(id, q)).map(presentKey);
  }

  @Admin()
  @ApiCreated(SSHKeyResponse)
  @Post('users/:id/keys')
  async addKeyTo(@Param('id', IdParam) id: number, @Input() dto: CreateKeyDto) {
    return presentKey(await this.keys.addTo(id, dto));
  }

  @Admin()
  @ApiOkResponse({ type: SSHKeyResponse })
  @Delete('users/:id/keys/:keyId')
  async removeKeyOf(@Param('id', IdParam) id: number, @Param('keyId', IdParam) keyId: number) {
    return presentKey(await this.keys.removeOf(id, keyId));
  }

  @Admin()
  @ApiOkResponse({ type: SSHKeyWithUserResponse })
  @Get('keys/:id')
  async keyWithOwner(@Param('id', IdParam) id: number) {
    return presentKeyWithOwner(await this.keys.getWithOwner(id));
  }

  // --- emails ---
  @ApiPageResponse(EmailResponse)
  @Get('user/emails')
  async myEmails(@CurrentUser() user: User, @Input() q: PaginationDto) {
    return (await this.emails.listOwn(user, q)).map(presentEmail);
  }

  @ApiOkResponse({ type: EmailResponse })
  @Get('user/emails/:id')
  async myEmail(@CurrentUser() user: User, @Param('id', IdParam) id: number) {
    return presentEmail(await this.emails.getOwn(user, id));
  }

  @ApiCreated(EmailResponse)
  @Post('user/emails')
  async addMyEmail(@CurrentUser() user: User, @Input() dto: CreateEmailDto) {
    return presentEmail(await this.emails.addOwn(user, dto));
  }

  /** Always 200: the deleted email, or no body. */
  @ApiOkResponse({ type: EmailResponse, description: 'the deleted email; an empty body when it did not exist' })
  @Delete('user/emails/:id')
  async removeMyEmail(@CurrentUser() user: User, @Param('id', IdParam) id: number) {
    const email = await this.emails.removeOwn(user, id);
    return email && presentEmail(email);
  }

  @Admin()
  @ApiPageResponse(EmailResponse)
  @Get('users/:id/emails')
  async emailsOf(@Param('id', IdParam) id: number, @Input() q: PaginationDto) {
    return (await this.emails.listOf(id, q)).map(presentEmail);
  }

  @Admin()
  @ApiCreated(EmailResponse)
  @Post('users/:id/emails')
  async addEmailTo(@Param('id', IdParam) id: number, @Input() dto: CreateEmailDto) {
    return presentEmail(await this.emails.addTo(id, dto));
  }

  @Admin()
  @ApiOkResponse({ type: EmailResponse })
  @Delete('users/:id/emails/:emailId')
  async removeEmailOf(@Param('id', IdParam) id: number, @Param('emailId', IdParam) emailId: number) {
    return presentEmail(await this.emails.removeOf(id, emailId));
  }
}
