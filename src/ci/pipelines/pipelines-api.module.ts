import { Module } from '@nestjs/common';
import { ProjectsModule } from '../../projects/projects.module';
import { UsersModule } from '../../users/users.module';
import { BuildsModule } from '../builds/builds.module';
import { PipelinesController } from './pipelines.controller';
import { PipelinesModule } from './pipelines.module';
import { ProjectPipelinesService } from './project-pipelines.service';

/** The v3 pipelines API (issue 28): list, show, create, retry, cancel; and the CI lint. */
@Module({
  imports: [PipelinesModule, BuildsModule, ProjectsModule, UsersModule],
  controllers: [PipelinesController],
  providers: [ProjectPipelinesService],
})
export class PipelinesApiModule {}
