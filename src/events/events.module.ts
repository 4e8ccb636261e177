import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { Event } from './event.entity';
import { DomainEvents } from './domain-events';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';
import { HookOutbox } from './hook-outbox';
import { PushReactions } from './push-reactions';

/** Global: every area records its events through EventsService (and hook events through HookOutbox). */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([Event]), UsersModule, ProjectsModule],
  controllers: [EventsController],
  providers: [EventsService, EventsRepository, DomainEvents, HookOutbox, PushReactions],
  exports: [EventsService, DomainEvents, HookOutbox, PushReactions],
})
export class EventsModule {}
