import { Controller, Get, Param, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { Input } from '../common/params/params';
import { UpdateGlobalNotificationSettingDto, UpdateNotificationSettingDto } from './dto/notification-settings.dto';
import { presentGlobalNotificationSetting, presentNotificationSetting } from './notification-settings.presenter';
import { NotificationSettingsService } from './notification-settings.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { GlobalNotificationSettingResponse, NotificationSettingResponse } from './notification-settings.responses';
import { GroupRef, GroupRefParam, ProjectRef, ProjectRefParam } from '../common/params/refs';

/** GitLab 8.12's notification settings: global, per project, per group. */
@Controller(API)
export class NotificationSettingsController {
  constructor(private readonly settings: NotificationSettingsService) {}

  @ApiOkResponse({ type: GlobalNotificationSettingResponse })
  @Get('notification_settings')
  async global(@CurrentUser() user: Caller) {
    return presentGlobalNotificationSetting(await this.settings.getGlobal(user));
  }

  @ApiOkResponse({ type: GlobalNotificationSettingResponse })
  @Put('notification_settings')
  async updateGlobal(@CurrentUser() user: Caller, @Input() dto: UpdateGlobalNotificationSettingDto) {
    return presentGlobalNotificationSetting(await this.settings.putGlobal(user, dto));
  }

  @ApiOkResponse({ type: NotificationSettingResponse })
  @Get('projects/:id/notification_settings')
  async project(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return presentNotificationSetting(await this.settings.getProject(user, id));
  }

  @ApiOkResponse({ type: NotificationSettingResponse })
  @Put('projects/:id/notification_settings')
  async updateProject(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: UpdateNotificationSettingDto) {
    return presentNotificationSetting(await this.settings.putProject(user, id, dto));
  }

  @ApiOkResponse({ type: NotificationSettingResponse })
  @Get('groups/:id/notification_settings')
  async group(@CurrentUser() user: Caller, @Param('id', GroupRefParam) id: GroupRef) {
    return presentNotificationSetting(await this.settings.getGroup(user, id));
  }

  @ApiOkResponse({ type: NotificationSettingResponse })
  @Put('groups/:id/notification_settings')
  async updateGroup(@CurrentUser() user: Caller, @Param('id', GroupRefParam) id: GroupRef, @Input() dto: UpdateNotificationSettingDto) {
    return presentNotificationSetting(await this.settings.putGroup(user, id, dto));
  }
}
