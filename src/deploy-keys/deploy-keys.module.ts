import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { AllDeployKeysController, ProjectDeployKeysController, ProjectKeysController } from './deploy-keys.controller';
import { DeployKeyOrphans } from './deploy-key-orphans';
import { DeployKeysProject } from './deploy-keys-project.entity';
import { DeployKeysRepository } from './deploy-keys.repository';
import { DeployKeysService } from './deploy-keys.service';

/**
 * Deploy keys (issue 39): `/deploy_keys`, `/projects/:id/deploy_keys` and its v3 alias `/projects/:id/keys`.
 * Owns `deploy_keys_projects`; the key rows are `keys` (users/, through KeysService). Git access asks
 * `DeployKeysService.accessTo` (git-access/), the SSH server authenticates the keys (ssh/).
 */
@Module({
  imports: [TypeOrmModule.forFeature([DeployKeysProject]), ProjectsModule, UsersModule],
  controllers: [AllDeployKeysController, ProjectDeployKeysController, ProjectKeysController],
  providers: [DeployKeysRepository, DeployKeysService, DeployKeyOrphans],
  exports: [DeployKeysService],
})
export class DeployKeysModule {}
