import { Module } from '@nestjs/common';
import { HooksModule } from './hooks.module';
import { SystemHookEventsService } from './system-hook-events.service';
import { SystemHooksController } from './system-hooks.controller';
import { SystemHooksService } from './system-hooks.service';

@Module({
  imports: [HooksModule],
  controllers: [SystemHooksController],
  providers: [SystemHooksService, SystemHookEventsService],
})
export class SystemHooksModule {}
