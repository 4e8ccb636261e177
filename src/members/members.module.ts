import { Module } from '@nestjs/common';
import { GroupsModule } from '../groups/groups.module';
import { ProjectsModule } from '../projects/projects.module';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';

@Module({ imports: [ProjectsModule, GroupsModule], controllers: [MembersController], providers: [MembersService] })
export class MembersModule {}
