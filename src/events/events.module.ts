import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Event } from './event.entity';
import { DomainEvents } from './domain-events';
import { EventsService } from './events.service';

/** Global: every area records its events through EventsService. */
@Global()
@Module({ imports: [TypeOrmModule.forFeature([Event])], providers: [EventsService, DomainEvents], exports: [EventsService, DomainEvents] })
export class EventsModule {}
