import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Project } from './project.entity';
import { ProjectStar } from './project-star.entity';
import { ProjectResolver } from './project-resolver.service';
import { ProjectViews } from './project-views.service';
import { ProjectsController } from './projects.controller';
import { ProjectsService } from './projects.service';

@Module({ imports: [TypeOrmModule.forFeature([Project, ProjectStar])],
  controllers: [ProjectsController],
  providers: [ProjectsService, ProjectViews, ProjectResolver],
  exports: [ProjectsService, ProjectViews, ProjectResolver],
})
export class ProjectsModule {}
