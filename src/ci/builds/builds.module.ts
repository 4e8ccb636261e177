import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../../users/users.module';
import { ArtifactsExpiry } from './artifacts-expiry';
import { BuildDetails } from './build.entity';
import { BuildsRepository } from './builds.repository';
import { BuildsService } from './builds.service';
import { TraceFollower } from './trace-follower';

/** Builds: their rows (with their commit status), state machine, trace and artifacts files. */
@Module({
  imports: [TypeOrmModule.forFeature([BuildDetails]), UsersModule],
  providers: [BuildsRepository, BuildsService, TraceFollower, ArtifactsExpiry],
  exports: [BuildsRepository, BuildsService, TraceFollower, ArtifactsExpiry],
})
export class BuildsModule {}
