import { Module } from '@nestjs/common';
import { EmailsService } from './emails.service';
import { KeysService } from './keys.service';
import { SessionService } from './session.service';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';

@Module({
  controllers: [UsersController],
  providers: [UsersService, KeysService, EmailsService, SessionService],
  exports: [UsersService, SessionService],
})
export class UsersModule {}
