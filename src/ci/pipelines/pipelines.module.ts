import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../../projects/projects.module';
import { UsersModule } from '../../users/users.module';
import { BuildsModule } from '../builds/builds.module';
import { BuildTimeoutSweeper } from './build-timeout.sweeper';
import { CiConfigWorkers } from './ci-config-workers';
import { Pipeline } from './pipeline.entity';
import { PipelinesController } from './pipelines.controller';
import { PipelinesRepository } from './pipelines.repository';
import { PipelinesService } from './pipelines.service';
import { ProjectPipelinesService } from './project-pipelines.service';
import { CiConfigPushCheck } from './push-ci-check';

/**
 * Pipelines from `.gitlab-ci.yml` on every push, stage progression, the build timeout sweep; and the
 * v3 pipelines API (issue 28): list, show, create, retry, cancel, and the CI lint. `.gitlab-ci.yml`
 * files are processed in CiConfigWorkers' worker threads, off the event loop; a push's are checked
 * for its `remote:` lines (CiConfigPushCheck, which git access calls). Owns `ci_pipelines`;
 * builds are reached through BuildsService.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Pipeline]), BuildsModule, ProjectsModule, UsersModule],
  controllers: [PipelinesController],
  providers: [PipelinesRepository, PipelinesService, BuildTimeoutSweeper, ProjectPipelinesService, CiConfigWorkers, CiConfigPushCheck],
  exports: [PipelinesService, BuildTimeoutSweeper, CiConfigPushCheck],
})
export class PipelinesModule {}
