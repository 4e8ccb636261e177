import { Module } from '@nestjs/common';
import { ProjectsModule } from '../../projects/projects.module';
import { BuildsApiModule } from '../builds/builds-api.module';
import { BadgesController } from './badges.controller';
import { BadgesService } from './badges.service';

/** The build status and coverage badges (issue 38): SVG at `/:namespace/:project/badges/…`. */
@Module({
  imports: [BuildsApiModule, ProjectsModule],
  controllers: [BadgesController],
  providers: [BadgesService],
})
export class BadgesModule {}
