import { Module } from '@nestjs/common';
import { ProjectsModule } from '../../projects/projects.module';
import { UsersModule } from '../../users/users.module';
import { PipelinesModule } from '../pipelines/pipelines.module';
import { BuildViews } from './build-views.service';
import { BuildsController } from './builds.controller';
import { BuildsModule } from './builds.module';
import { ProjectBuildsService } from './project-builds.service';

/** The v3 builds API (issue 13): list, show, artifacts, trace, cancel, retry, erase. */
@Module({
  imports: [BuildsModule, PipelinesModule, ProjectsModule, UsersModule],
  controllers: [BuildsController],
  providers: [ProjectBuildsService, BuildViews],
})
export class BuildsApiModule {}
