import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NamespacesModule } from '../namespaces/namespaces.module';
import { ProjectRecordsModule } from '../projects/project-records.module';
import { Email } from './email.entity';
import { EmailsRepository } from './emails.repository';
import { EmailsService } from './emails.service';
import { Identity } from './identity.entity';
import { SshKey } from './key.entity';
import { KeysRepository } from './keys.repository';
import { KeysService } from './keys.service';
import { RootUser } from './root-user';
import { SessionService } from './session.service';
import { UserViews } from './user-views.service';
import { User } from './user.entity';
import { UsersController } from './users.controller';
import { UsersRepository } from './users.repository';
import { UserDirectory } from './user-directory.service';
import { UsersService } from './users.service';

@Module({
  imports: [TypeOrmModule.forFeature([User, Identity, SshKey, Email]), NamespacesModule, ProjectRecordsModule],
  controllers: [UsersController],
  providers: [UsersRepository, UserDirectory, KeysRepository, EmailsRepository, UsersService, UserViews, KeysService, EmailsService, SessionService, RootUser],
  exports: [UserDirectory, UsersService, UserViews, SessionService, RootUser, KeysService],
})
export class UsersModule {}
