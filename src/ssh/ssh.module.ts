import { Module } from '@nestjs/common';
import { DeployKeysModule } from '../deploy-keys/deploy-keys.module';
import { GitAccessModule } from '../git-access/git-access.module';
import { LfsModule } from '../lfs/lfs.module';
import { UsersModule } from '../users/users.module';
import { SshServerService } from './ssh-server.service';

/** Git over SSH: the built-in server (ssh2), on the same access rules as smart HTTP (GitAccess). */
@Module({
  imports: [GitAccessModule, UsersModule, DeployKeysModule, LfsModule],
  providers: [SshServerService],
  exports: [SshServerService],
})
export class SshModule {}
