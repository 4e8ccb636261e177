import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module';
import { PushService } from './push.service';

@Module({
  imports: [ProjectsModule],
  controllers: [],
  providers: [PushService],
  exports: [PushService],
})
export class RepositoryModule {}
