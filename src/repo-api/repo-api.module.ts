import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BuildsModule } from '../ci/builds/builds.module';
import { ProtectedBranch, Release, CommitComment } from './repo-api.entities';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { BranchesController } from './branches.controller';
import { BranchesService } from './branches.service';
import { CommitsController } from './commits.controller';
import { CommitsService } from './commits.service';
import { ContentsController } from './contents.controller';
import { ContentsService } from './contents.service';
import { PushService } from './push.service';
import { RepositoryJobs } from './repository-jobs.service';
import { RepositoryAccess } from './repository-access.service';
import { RepositoryRecords } from './repo-api.repository';
import { TagsController } from './tags.controller';
import { TagsService } from './tags.service';

/** The repository API (branches, tags, commits, contents, files) and branch protection / push handling. */
@Module({
  imports: [TypeOrmModule.forFeature([ProtectedBranch, Release, CommitComment]), ProjectsModule, UsersModule, BuildsModule],
  controllers: [BranchesController, TagsController, CommitsController, ContentsController],
  providers: [RepositoryRecords, RepositoryJobs, PushService, RepositoryAccess, BranchesService, TagsService, CommitsService, ContentsService],
  exports: [PushService, RepositoryAccess, CommitsService],
})
export class RepositoryModule {}
