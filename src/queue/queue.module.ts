import { Global, Module } from '@nestjs/common';
import { QueueRepository } from './queue.repository';
import { QueueService } from './queue.service';

/** Global: every area enqueues background work through QueueService. */
@Global()
@Module({ providers: [QueueRepository, QueueService], exports: [QueueService] })
export class QueueModule {}
