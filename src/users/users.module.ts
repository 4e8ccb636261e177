import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { User } from './user.entity';
import { Identity } from './identity.entity';
import { SshKey } from './key.entity';
import { Email } from './email.entity';
import { EmailsService } from './emails.service';
import { KeysService } from './keys.service';
import { SessionService } from './session.service';
import { UsersController } from './users.controller';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

@Module({ imports: [TypeOrmModule.forFeature([User, Identity, SshKey, Email])],
  controllers: [UsersController],
  providers: [UsersRepository, UsersService, KeysService, EmailsService, SessionService],
  exports: [UsersRepository, UsersService, SessionService],
})
export class UsersModule {}
