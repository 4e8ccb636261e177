import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../../users/users.module';
import { ArtifactsExpiry } from './artifacts-expiry';
import { BuildDetails } from './build.entity';
import { CommitStatus } from './commit-status.entity';
import { CommitStatusesRepository } from './commit-statuses.repository';
import { CommitStatusesService } from './commit-statuses.service';
import { BuildsRepository } from './builds.repository';
import { BuildsService } from './builds.service';
import { TraceFollower } from './trace-follower';

/** Builds: their rows (with their commit status), state machine, trace and artifacts files; commit statuses (`commit_statuses`, a build's base row, and the external statuses of the statuses API). */
@Module({
  imports: [TypeOrmModule.forFeature([BuildDetails, CommitStatus]), UsersModule],
  providers: [BuildsRepository, BuildsService, TraceFollower, ArtifactsExpiry, CommitStatusesRepository, CommitStatusesService],
  exports: [BuildsService, TraceFollower, ArtifactsExpiry, CommitStatusesService],
})
export class BuildsModule {}
