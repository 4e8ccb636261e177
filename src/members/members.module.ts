import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectMember, GroupMember } from './member.entities';
import { GroupsModule } from '../groups/groups.module';
import { ProjectsModule } from '../projects/projects.module';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';

@Module({ imports: [TypeOrmModule.forFeature([ProjectMember, GroupMember]), ProjectsModule, GroupsModule], controllers: [MembersController], providers: [MembersService] })
export class MembersModule {}
