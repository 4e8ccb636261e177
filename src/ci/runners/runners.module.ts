import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../../projects/projects.module';
import { RunnerCache } from './runner-cache';
import { Runner, RunnerProject } from './runner.entity';
import { RunnersController } from './runners.controller';
import { RunnersRepository } from './runners.repository';
import { RunnersApiService } from './runners-api.service';
import { RunnersService } from './runners.service';

/**
 * Runners: registration, removal, authentication by runner token (RunnersService, for the runner
 * API); and the v3 runners API (issue 13): `/runners`, `/runners/all`, `/runners/:id`,
 * `/projects/:id/runners`. Owns `ci_runners` and `ci_runner_projects`.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Runner, RunnerProject]), ProjectsModule],
  controllers: [RunnersController],
  providers: [RunnerCache, RunnersRepository, RunnersService, RunnersApiService],
  exports: [RunnersService],
})
export class RunnersModule {}
