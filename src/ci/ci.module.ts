import { Module } from '@nestjs/common';
import { BuildsModule } from './builds/builds.module';
import { PipelinesModule } from './pipelines/pipelines.module';
import { RunnerApiModule } from './runner-api/runner-api.module';
import { RunnersModule } from './runners/runners.module';

/** CI: pipelines from `.gitlab-ci.yml`, builds, runners and the runner API v1. */
@Module({ imports: [PipelinesModule, BuildsModule, RunnersModule, RunnerApiModule] })
export class CiModule {}
