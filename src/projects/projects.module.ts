import { Module } from '@nestjs/common';
import { ProjectViews } from './project-views.service';
import { ProjectsController } from './projects.controller';
import { ProjectsService } from './projects.service';

@Module({
  controllers: [ProjectsController],
  providers: [ProjectsService, ProjectViews],
  exports: [ProjectsService, ProjectViews],
})
export class ProjectsModule {}
