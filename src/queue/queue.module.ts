import { Global, Module } from '@nestjs/common';
import { QueueService } from './queue.service';

/** Global: every area enqueues background work through QueueService. */
@Global()
@Module({ providers: [QueueService], exports: [QueueService] })
export class QueueModule {}
