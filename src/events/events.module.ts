import { Global, Module } from '@nestjs/common';
import { EventsService } from './events.service';

/** Global: every area records its events through EventsService. */
@Global()
@Module({ providers: [EventsService], exports: [EventsService] })
export class EventsModule {}
