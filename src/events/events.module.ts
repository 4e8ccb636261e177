import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectRecordsModule } from '../projects/project-records.module';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { Event } from './event.entity';
import { DomainEvents } from './domain-events';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';

/** Global: every area records its events through EventsService and emits domain events through DomainEvents (see domain-events.ts). */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([Event]), DiscoveryModule, UsersModule, ProjectsModule, ProjectRecordsModule],
  controllers: [EventsController],
  providers: [EventsService, EventsRepository, DomainEvents],
  exports: [EventsService, DomainEvents],
})
export class EventsModule {}
