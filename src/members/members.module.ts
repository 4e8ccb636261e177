import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GroupsModule } from '../groups/groups.module';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { GroupMember, ProjectMember } from './member.entities';
import { MemberViews } from './member-views.service';
import { MembersController } from './members.controller';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';

@Module({
  imports: [TypeOrmModule.forFeature([ProjectMember, GroupMember]), ProjectsModule, GroupsModule, UsersModule],
  controllers: [MembersController],
  providers: [MembersService, MembersRepository, MemberViews],
})
export class MembersModule {}
