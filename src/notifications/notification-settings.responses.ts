import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';
import { NOTIFICATION_LEVELS } from './notification-levels';

/** The custom level's switches, in CUSTOM_EVENTS order (notification-levels.ts). */
@ResponseEntity('NotificationEvents')
export class NotificationEventsResponse {
  @ApiProperty({ type: Boolean })
  new_note!: boolean;

  @ApiProperty({ type: Boolean })
  new_issue!: boolean;

  @ApiProperty({ type: Boolean })
  reopen_issue!: boolean;

  @ApiProperty({ type: Boolean })
  close_issue!: boolean;

  @ApiProperty({ type: Boolean })
  reassign_issue!: boolean;

  @ApiProperty({ type: Boolean })
  new_merge_request!: boolean;

  @ApiProperty({ type: Boolean })
  reopen_merge_request!: boolean;

  @ApiProperty({ type: Boolean })
  close_merge_request!: boolean;

  @ApiProperty({ type: Boolean })
  reassign_merge_request!: boolean;

  @ApiProperty({ type: Boolean })
  merge_merge_request!: boolean;

  @ApiProperty({ type: Boolean })
  failed_pipeline!: boolean;

  @ApiProperty({ type: Boolean })
  success_pipeline!: boolean;
}

@ResponseEntity('NotificationSetting', "A notification level (GitLab 8.12); `events`, the custom level's switches, only for `custom`.")
export class NotificationSettingResponse {
  @ApiProperty({ type: String, enum: Object.keys(NOTIFICATION_LEVELS) })
  level!: string;

  @ApiProperty({ type: () => NotificationEventsResponse, required: false, description: 'only for the custom level' })
  events?: NotificationEventsResponse;
}

@ResponseEntity('GlobalNotificationSetting', 'The global notification level (default participating) and address.')
export class GlobalNotificationSettingResponse extends NotificationSettingResponse {
  @ApiProperty({ type: String, description: 'where notifications are sent: the account email unless set' })
  notification_email!: string;
}
