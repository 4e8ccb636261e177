import { Global, Module } from '@nestjs/common';
import { ApplicationSettingsController } from './application-settings.controller';
import { ApplicationSettingsService } from './application-settings.service';

/** Global: every area reads the instance settings through ApplicationSettingsService. */
@Global()
@Module({
  controllers: [ApplicationSettingsController],
  providers: [ApplicationSettingsService],
  exports: [ApplicationSettingsService],
})
export class ApplicationSettingsModule {}
