import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../projects/projects.module';
import { HookDataRepository } from './hook-data.repository';
import { HookDeliveryService } from './hook-delivery.service';
import { HookEventsService } from './hook-events.service';
import { HookOutboxWorker } from './hook-outbox.worker';
import { HooksController } from './hooks.controller';
import { HooksRepository } from './hooks.repository';
import { HooksService } from './hooks.service';
import { WebHook, WebHookLog } from './web-hook.entity';

/** Project webhooks, and the delivery machinery system hooks share (HookDeliveryService). */
@Module({
  imports: [TypeOrmModule.forFeature([WebHook, WebHookLog]), ProjectsModule],
  controllers: [HooksController],
  providers: [HooksService, HooksRepository, HookDataRepository, HookDeliveryService, HookOutboxWorker, HookEventsService],
  exports: [HooksRepository, HookDataRepository, HookDeliveryService, HookOutboxWorker],
})
export class HooksModule {}
