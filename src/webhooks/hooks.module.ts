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
import { SystemHookEventsService } from './system-hook-events.service';
import { SystemHooksController } from './system-hooks.controller';
import { SystemHooksService } from './system-hooks.service';
import { WebHook, WebHookLog } from './web-hook.entity';

/** Project webhooks and system hooks (`web_hooks`, `web_hook_logs`), with the delivery machinery both share (HookDeliveryService, the outbox worker). */
@Module({
  imports: [TypeOrmModule.forFeature([WebHook, WebHookLog]), ProjectsModule],
  controllers: [HooksController, SystemHooksController],
  providers: [
    HooksService,
    HooksRepository,
    HookDataRepository,
    HookDeliveryService,
    HookOutboxWorker,
    HookEventsService,
    SystemHooksService,
    SystemHookEventsService,
  ],
  exports: [HookDeliveryService, HookOutboxWorker],
})
export class HooksModule {}
