import { Module } from '@nestjs/common';
import { BadgesModule } from './badges/badges.module';
import { BuildsApiModule } from './builds/builds-api.module';
import { BuildsModule } from './builds/builds.module';
import { EnvironmentsModule } from './environments/environments.module';
import { PipelinesModule } from './pipelines/pipelines.module';
import { RunnerApiModule } from './runner-api/runner-api.module';
import { RunnersModule } from './runners/runners.module';
import { TriggersModule } from './triggers/triggers.module';
import { VariablesModule } from './variables/variables.module';

/** CI: pipelines from `.gitlab-ci.yml`, builds, runners, the runner API v1 and the v3 builds API. */
@Module({
  imports: [PipelinesModule, BuildsModule, RunnersModule, RunnerApiModule, BuildsApiModule, VariablesModule, TriggersModule, BadgesModule, EnvironmentsModule],
})
export class CiModule {}
