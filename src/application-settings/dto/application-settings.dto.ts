import { Bool, FieldMapErrors, Int, IntList, List, Str } from '../../common/dto/fields';

/**
 * `PUT /application/settings`: every field optional; `null` or absent leaves it as it is. GitLab
 * validates the settings as a model, so a bad value of any field is listed in one field map with the
 * others' errors (`@FieldMapErrors()`, merged by `checkSettings`), and nothing is applied.
 */
@FieldMapErrors()
export class UpdateApplicationSettingsDto {
  @Int() default_projects_limit?: number;
  @Bool() signup_enabled?: boolean;
  @Bool() signin_enabled?: boolean;
  @Bool() gravatar_enabled?: boolean;
  /** The spec's name for `gravatar_enabled` (wins when both are given). */
  @Bool() avatar_enabled?: boolean;
  @Bool() user_oauth_applications?: boolean;
  @Bool() allow_local_requests_from_hooks_and_services?: boolean;
  @Bool() shared_runners_enabled?: boolean;
  /** `true` replaces the runners registration token with a new one (the old one registers nothing more). */
  @Bool() reset_runners_registration_token?: boolean;
  @Str() sign_in_text?: string;
  @Str() home_page_url?: string;
  @Str() after_sign_out_path?: string;
  /** 0, 1 or 2. */
  @Int() default_branch_protection?: number;
  /** 0, 10, 20 (1 and 2 read as 10 and 20). */
  @Int() default_project_visibility?: number;
  @Int() default_snippet_visibility?: number;
  @Int() default_group_visibility?: number;
  @IntList({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }) restricted_visibility_levels?: number[];
  @Int() max_attachment_size?: number;
  /** MB. */
  @Int() max_artifacts_size?: number;
  /** MB (GitLab 8.17's Pages setting). */
  @Int() max_pages_size?: number;
  @Int() session_expire_delay?: number;
  @Int() container_registry_token_expire_delay?: number;
  @List() restricted_signup_domains?: string[];
  /** Another name of `restricted_signup_domains` (wins when both are given). */
  @List() domain_whitelist?: string[];
}
