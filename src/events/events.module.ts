import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { Event } from './event.entity';
import { DomainEvents } from './domain-events';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';
import { PushReactions } from './push-reactions';

/** Global: every area records its events through EventsService. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([Event]), UsersModule, ProjectsModule],
  controllers: [EventsController],
  providers: [EventsService, EventsRepository, DomainEvents, PushReactions],
  exports: [EventsService, DomainEvents, PushReactions],
})
export class EventsModule {}
