import { Module } from '@nestjs/common';
import { PipelinesModule } from '../ci/pipelines/pipelines.module';
import { DeployKeysModule } from '../deploy-keys/deploy-keys.module';
import { ProjectsModule } from '../projects/projects.module';
import { RepositoryModule } from '../repo-api/repo-api.module';
import { GitAccess } from './git-access.service';

/**
 * What a git transport may do for a caller (GitAccess): both transports (git-http/, ssh/) sit on it, and
 * the CI area declares the build-token port here (`@ResolvesBuildToken`, build-tokens.ts).
 */
@Module({
  imports: [ProjectsModule, RepositoryModule, DeployKeysModule, PipelinesModule],
  providers: [GitAccess],
  exports: [GitAccess],
})
export class GitAccessModule {}
