import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectRecordsModule } from '../projects/project-records.module';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { Event } from './event.entity';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';

/** The activity feed: it records `activity.recorded` domain events (EventsService.onActivity) and serves the feeds. */
@Module({
  imports: [TypeOrmModule.forFeature([Event]), UsersModule, ProjectsModule, ProjectRecordsModule],
  controllers: [EventsController],
  providers: [EventsService, EventsRepository],
  exports: [EventsService],
})
export class EventsModule {}
