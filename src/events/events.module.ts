import { Global, Module } from '@nestjs/common';
import { DomainEvents } from './domain-events';
import { EventsService } from './events.service';

/** Global: every area records its events through EventsService. */
@Global()
@Module({ providers: [EventsService, DomainEvents], exports: [EventsService, DomainEvents] })
export class EventsModule {}
