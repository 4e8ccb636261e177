import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunnerCache } from './runner-cache';
import { Runner, RunnerProject } from './runner.entity';
import { RunnersRepository } from './runners.repository';
import { RunnersService } from './runners.service';

/** Runners: registration, removal, authentication by runner token. */
@Module({
  imports: [TypeOrmModule.forFeature([Runner, RunnerProject])],
  providers: [RunnerCache, RunnersRepository, RunnersService],
  exports: [RunnersRepository, RunnersService],
})
export class RunnersModule {}
