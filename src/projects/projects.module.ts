import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MembershipsModule } from '../members/memberships.module';
import { NamespacesModule } from '../namespaces/namespaces.module';
import { UsersModule } from '../users/users.module';
import { Project } from './project.entity';
import { ProjectStar } from './project-star.entity';
import { ProjectCreation } from './project-creation.service';
import { ProjectImports } from './project-imports.service';
import { ProjectInsertion } from './project-insertion.service';
import { ProjectResolver } from './project-resolver.service';
import { ProjectViews } from './project-views.service';
import { ProjectsController } from './projects.controller';
import { ProjectsRepository } from './projects.repository';
import { ProjectsService } from './projects.service';

@Module({
  imports: [TypeOrmModule.forFeature([Project, ProjectStar]), UsersModule, MembershipsModule, NamespacesModule],
  controllers: [ProjectsController],
  providers: [ProjectsService, ProjectCreation, ProjectImports, ProjectInsertion, ProjectsRepository, ProjectViews, ProjectResolver],
  // ProjectsService for transfers and a group's projects (the groups area)
  exports: [ProjectsService, ProjectViews, ProjectResolver],
})
export class ProjectsModule {}
