import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Project } from './project.entity';
import { ProjectRecordsRepository } from './project-records.repository';
import { ProjectRecordsService } from './project-records.service';

/**
 * The projects area's service for other areas' transactions (ProjectRecordsService). Separate from
 * ProjectsModule, which imports the users area (whose user deletion needs this one) and records
 * events (whose recording touches `last_activity_at` through this one).
 */
@Module({
  imports: [TypeOrmModule.forFeature([Project])],
  providers: [ProjectRecordsRepository, ProjectRecordsService],
  exports: [ProjectRecordsService],
})
export class ProjectRecordsModule {}
