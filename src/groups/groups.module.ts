import { Module } from '@nestjs/common';
import { NamespacesModule } from '../namespaces/namespaces.module';
import { MembershipsModule } from '../members/memberships.module';
import { ProjectsModule } from '../projects/projects.module';
import { GroupViews } from './group-views.service';
import { GroupsController } from './groups.controller';
import { GroupsService } from './groups.service';

@Module({
  imports: [NamespacesModule, ProjectsModule, MembershipsModule],
  controllers: [GroupsController],
  providers: [GroupsService, GroupViews],
  exports: [GroupsService],
})
export class GroupsModule {}
