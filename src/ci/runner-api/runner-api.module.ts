import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { BuildsModule } from '../builds/builds.module';
import { PipelinesModule } from '../pipelines/pipelines.module';
import { RunnersModule } from '../runners/runners.module';
import { RunnerApiBodyMiddleware } from './runner-api-body.middleware';
import { RunnerApiController } from './runner-api.controller';
import { RunnerApiService } from './runner-api.service';
import { RunnerPollRoute } from './runner-poll.route';

/** `/ci/api/v1`: what runners call. Also teaches git over HTTP to accept build tokens. */
@Module({
  imports: [RunnersModule, BuildsModule, PipelinesModule],
  controllers: [RunnerApiController],
  providers: [RunnerApiService, RunnerPollRoute],
  exports: [RunnerPollRoute],
})
export class RunnerApiModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RunnerApiBodyMiddleware).forRoutes(RunnerApiController);
  }
}
