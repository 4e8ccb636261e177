import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module';
import { GroupsController } from './groups.controller';
import { GroupsService } from './groups.service';

@Module({ imports: [ProjectsModule], controllers: [GroupsController], providers: [GroupsService], exports: [GroupsService] })
export class GroupsModule {}
