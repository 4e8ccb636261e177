import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GitAccessModule } from '../git-access/git-access.module';
import { LfsLifecycle } from './lfs-lifecycle';
import { LfsObject } from './lfs-object.entity';
import { LfsStorage } from './lfs-storage';
import { LfsTokens } from './lfs-tokens';
import { LfsRepository } from './lfs.repository';
import { LfsService } from './lfs.service';

/**
 * Git LFS (issue 39 item 3, GitLab CE 8.17): owns `lfs_objects` and `lfs_objects_projects` and the files
 * under `<DATA_DIR>/lfs-objects`. Its HTTP routes are git-http's (`LfsController`, beside the git
 * transport whose authentication they share); the SSH server hands out its tokens (`git-lfs-authenticate`).
 */
@Module({
  imports: [TypeOrmModule.forFeature([LfsObject]), GitAccessModule],
  providers: [LfsRepository, LfsStorage, LfsTokens, LfsService, LfsLifecycle],
  exports: [LfsService, LfsTokens, LfsLifecycle],
})
export class LfsModule {}
