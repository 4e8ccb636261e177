import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ProjectsModule } from '../projects/projects.module';
import { RepositoryModule } from '../repository/repository.module';
import { UsersModule } from '../users/users.module';
import { GitAccess } from './git-access.service';
import { GitAuthBan } from './git-auth-ban';
import { GitHttpController } from './git-http.controller';
import { GitHttpService } from './git-http.service';

@Module({
  imports: [DiscoveryModule, ProjectsModule, UsersModule, RepositoryModule],
  controllers: [GitHttpController],
  providers: [GitHttpService, GitAuthBan, GitAccess],
  exports: [GitHttpService, GitAccess, GitAuthBan],
})
export class GitHttpModule {}
