import { Module } from '@nestjs/common';
import { ProjectsModule } from '../../projects/projects.module';
import { RunnersController } from './runners.controller';
import { RunnersModule } from './runners.module';
import { RunnersApiService } from './runners-api.service';

/** The v3 runners API (issue 13): `/runners`, `/runners/all`, `/runners/:id`, `/projects/:id/runners`. */
@Module({
  imports: [RunnersModule, ProjectsModule],
  controllers: [RunnersController],
  providers: [RunnersApiService],
})
export class RunnersApiModule {}
