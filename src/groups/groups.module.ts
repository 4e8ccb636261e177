import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Namespace } from '../namespaces/namespace.entity';
import { ProjectsModule } from '../projects/projects.module';
import { GroupViews } from './group-views.service';
import { GroupsController } from './groups.controller';
import { GroupsRepository } from './groups.repository';
import { GroupsService } from './groups.service';

@Module({
  imports: [TypeOrmModule.forFeature([Namespace]), ProjectsModule],
  controllers: [GroupsController],
  providers: [GroupsService, GroupsRepository, GroupViews],
  exports: [GroupsService],
})
export class GroupsModule {}
