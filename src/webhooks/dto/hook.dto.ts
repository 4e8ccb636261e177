import { Bool, Str } from '../../common/dto/fields';

/** The switches and options shared by project hooks and system hooks. */
export class HookOptionsDto {
  @Bool() push_events?: boolean;
  @Bool() tag_push_events?: boolean;
  @Bool() issues_events?: boolean;
  @Bool() merge_requests_events?: boolean;
  @Bool() note_events?: boolean;
  @Bool() build_events?: boolean;
  @Bool() enable_ssl_verification?: boolean;
  /** Sent back as `X-Gitlab-Token`; stored encrypted, never shown. A blank value clears it. */
  @Str({ clearable: true, max: 255 }) token?: string | null;
}

export class CreateHookDto extends HookOptionsDto {
  @Str({ required: true, trim: true, max: 4096 }) url!: string;
}

/** GitLab 8.17's `PUT /projects/:id/hooks/:hook_id` requires `url` as its POST does. */
export class UpdateHookDto extends CreateHookDto {}
