import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { UsersModule } from '../users/users.module';
import { GitAccessModule } from '../git-access/git-access.module';
import { LfsModule } from '../lfs/lfs.module';
import { GitHttpController } from './git-http.controller';
import { GitHttpService } from './git-http.service';
import { LfsController } from './lfs.controller';
import { LfsHttpService } from './lfs-http.service';

@Module({
  imports: [DiscoveryModule, GitAccessModule, UsersModule, LfsModule],
  controllers: [GitHttpController, LfsController],
  providers: [GitHttpService, LfsHttpService],
  exports: [GitHttpService],
})
export class GitHttpModule {}
