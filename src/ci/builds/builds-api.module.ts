import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../../projects/projects.module';
import { UsersModule } from '../../users/users.module';
import { PipelinesModule } from '../pipelines/pipelines.module';
import { BuildDetails } from './build.entity';
import { BuildViews } from './build-views.service';
import { BuildRefsController } from './build-refs.controller';
import { BuildRefsRepository } from './build-refs.repository';
import { BuildRefs } from './build-refs.service';
import { BuildsController } from './builds.controller';
import { BuildsModule } from './builds.module';
import { BuildsRepository } from './builds.repository';
import { ProjectBuildsService } from './project-builds.service';

/**
 * The v3 builds API (issue 13): list, show, artifacts, trace, cancel, retry, erase; a ref's artifacts,
 * keeping artifacts and what the badges show (issue 38, `BuildRefs`). Its own module (it
 * retries through PipelinesModule, which depends on BuildsModule); its lists read the builds area's
 * tables through the area's repository, provided here as well.
 */
@Module({
  imports: [TypeOrmModule.forFeature([BuildDetails]), BuildsModule, PipelinesModule, ProjectsModule, UsersModule],
  controllers: [BuildsController, BuildRefsController],
  providers: [BuildsRepository, ProjectBuildsService, BuildViews, BuildRefsRepository, BuildRefs],
  exports: [ProjectBuildsService, BuildViews, BuildRefs],
})
export class BuildsApiModule {}
