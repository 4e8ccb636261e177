import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BuildsModule } from '../builds/builds.module';
import { Trigger, TriggerRequest, Variable } from '../variables/variable.entities';
import { BuildTimeoutSweeper } from './build-timeout.sweeper';
import { Pipeline } from './pipeline.entity';
import { PipelinesRepository } from './pipelines.repository';
import { PipelinesService } from './pipelines.service';

/** Pipelines from `.gitlab-ci.yml` on every push, stage progression, the build timeout sweep. */
@Module({
  imports: [TypeOrmModule.forFeature([Pipeline, Variable, Trigger, TriggerRequest]), BuildsModule],
  providers: [PipelinesRepository, PipelinesService, BuildTimeoutSweeper],
  exports: [PipelinesService, PipelinesRepository, BuildTimeoutSweeper],
})
export class PipelinesModule {}
