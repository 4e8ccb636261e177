import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../../projects/projects.module';
import { UsersModule } from '../../users/users.module';
import { BuildsApiModule } from '../builds/builds-api.module';
import { BuildsModule } from '../builds/builds.module';
import { PipelinesModule } from '../pipelines/pipelines.module';
import { DeploymentsService } from './deployments.service';
import { Deployment, Environment } from './environment.entities';
import { EnvironmentDeployments } from './environment-deployments.service';
import { EnvironmentViews } from './environment-views.service';
import { DeploymentsController, EnvironmentsController } from './environments.controller';
import { EnvironmentsRepository } from './environments.repository';
import { EnvironmentsService } from './environments.service';

/**
 * Environments and deployments (GitLab 8.17, issue 38): `/projects/:id/environments` and
 * `/deployments`, the deployment a successful build records, and the stop of a deleted branch's
 * environments. Owns `environments` and `deployments`.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Environment, Deployment]), ProjectsModule, UsersModule, BuildsModule, BuildsApiModule, PipelinesModule],
  controllers: [EnvironmentsController, DeploymentsController],
  providers: [EnvironmentsRepository, EnvironmentsService, DeploymentsService, EnvironmentViews, EnvironmentDeployments],
  exports: [EnvironmentsService],
})
export class EnvironmentsModule {}
