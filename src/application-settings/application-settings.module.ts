import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationSettings } from './application-settings.entity';
import { ApplicationSettingsController } from './application-settings.controller';
import { ApplicationSettingsRepository } from './application-settings.repository';
import { ApplicationSettingsService } from './application-settings.service';

/** Global: every area reads the instance settings through ApplicationSettingsService. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([ApplicationSettings]), DiscoveryModule],
  controllers: [ApplicationSettingsController],
  providers: [ApplicationSettingsService, ApplicationSettingsRepository],
  exports: [ApplicationSettingsService],
})
export class ApplicationSettingsModule {}
