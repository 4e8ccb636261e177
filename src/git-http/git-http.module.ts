import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ProjectsModule } from '../projects/projects.module';
import { RepositoryModule } from '../repository/repository.module';
import { UsersModule } from '../users/users.module';
import { GitAccess } from './git-access.service';
import { GitHttpController } from './git-http.controller';
import { GitHttpService } from './git-http.service';

@Module({
  imports: [DiscoveryModule, ProjectsModule, UsersModule, RepositoryModule],
  controllers: [GitHttpController],
  providers: [GitHttpService, GitAccess],
  exports: [GitHttpService, GitAccess],
})
export class GitHttpModule {}
