import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module';
import { RepositoryModule } from '../repository/repository.module';
import { UsersModule } from '../users/users.module';
import { GitHttpController } from './git-http.controller';
import { GitHttpService } from './git-http.service';

@Module({
  imports: [ProjectsModule, UsersModule, RepositoryModule],
  controllers: [GitHttpController],
  providers: [GitHttpService],
  exports: [GitHttpService],
})
export class GitHttpModule {}
