import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module';
import { Project } from './project.entity';
import { ProjectStar } from './project-star.entity';
import { ProjectResolver } from './project-resolver.service';
import { ProjectViews } from './project-views.service';
import { ProjectsController } from './projects.controller';
import { ProjectsRepository } from './projects.repository';
import { ProjectsService } from './projects.service';

@Module({
  imports: [TypeOrmModule.forFeature([Project, ProjectStar]), UsersModule],
  controllers: [ProjectsController],
  providers: [ProjectsService, ProjectsRepository, ProjectViews, ProjectResolver],
  // ProjectsRepository for the groups area (a group's projects); ProjectsService for transfers and
  // for the deprecated authorize/findByRef delegates other areas still call
  exports: [ProjectsService, ProjectsRepository, ProjectViews, ProjectResolver],
})
export class ProjectsModule {}
