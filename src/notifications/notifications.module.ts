import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/config';
import { GroupsModule } from '../groups/groups.module';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { NotificationFactsRepository } from './notification-facts.repository';
import { NotificationSetting } from './notification-setting.entity';
import { NotificationSettingsController } from './notification-settings.controller';
import { NotificationSettingsRepository } from './notification-settings.repository';
import { NotificationSettingsService } from './notification-settings.service';
import { NotificationTriggers } from './notification-triggers';
import { NotificationsService } from './notifications.service';

/**
 * Email notifications (GitLab 8's NotificationService) and the notification settings API. The
 * triggers (durable domain event handlers) exist only when SMTP_URL is set: without it no event is
 * queued for notifications and no mail job either; the settings API works either way.
 */
@Module({})
export class NotificationsModule {
  static forRoot(config: Pick<AppConfig, 'email'>): DynamicModule {
    return {
      module: NotificationsModule,
      imports: [TypeOrmModule.forFeature([NotificationSetting]), ProjectsModule, GroupsModule, UsersModule],
      controllers: [NotificationSettingsController],
      providers: [
        NotificationSettingsService,
        NotificationSettingsRepository,
        NotificationFactsRepository,
        NotificationsService,
        ...(config.email ? [NotificationTriggers] : []),
      ],
      exports: [NotificationsService],
    };
  }
}
