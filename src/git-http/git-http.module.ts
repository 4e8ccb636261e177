import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { UsersModule } from '../users/users.module';
import { GitAccessModule } from '../git-access/git-access.module';
import { GitHttpController } from './git-http.controller';
import { GitHttpService } from './git-http.service';

@Module({
  imports: [DiscoveryModule, GitAccessModule, UsersModule],
  controllers: [GitHttpController],
  providers: [GitHttpService],
  exports: [GitHttpService],
})
export class GitHttpModule {}
