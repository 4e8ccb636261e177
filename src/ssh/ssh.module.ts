import { Module } from '@nestjs/common';
import { GitHttpModule } from '../git-http/git-http.module';
import { UsersModule } from '../users/users.module';
import { SshServerService } from './ssh-server.service';

/** Git over SSH: the built-in server (ssh2), on the same access rules as smart HTTP (GitAccess). */
@Module({
  imports: [GitHttpModule, UsersModule],
  providers: [SshServerService],
  exports: [SshServerService],
})
export class SshModule {}
