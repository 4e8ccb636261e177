import { Bool, Str } from '../../common/dto/fields';

/** PUT .../notification_settings: `level` and the custom level's switches (GitLab 8.12). */
export class UpdateNotificationSettingDto {
  /** disabled, participating, watch, global, mention or custom; another word answers 400 "'x' is not a valid level". */
  @Str() level?: string;
  @Bool() new_note?: boolean;
  @Bool() new_issue?: boolean;
  @Bool() reopen_issue?: boolean;
  @Bool() close_issue?: boolean;
  @Bool() reassign_issue?: boolean;
  @Bool() new_merge_request?: boolean;
  @Bool() reopen_merge_request?: boolean;
  @Bool() close_merge_request?: boolean;
  @Bool() reassign_merge_request?: boolean;
  @Bool() merge_merge_request?: boolean;
  @Bool() failed_pipeline?: boolean;
  @Bool() success_pipeline?: boolean;
}

/** PUT /notification_settings: also where the mails go. */
export class UpdateGlobalNotificationSettingDto extends UpdateNotificationSettingDto {
  /** One of the user's own addresses (primary or secondary). */
  @Str({ trim: true, maxLength: 255 }) notification_email?: string;
}
