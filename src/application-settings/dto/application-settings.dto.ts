import { Bool, Int, IntList, List, Str } from '../../common/dto/fields';

const INVALID = { invalid: 'is invalid' } as const;

/**
 * `PUT /application/settings`: every field optional; `null` or absent leaves it as it is. GitLab
 * validates the settings as a model, so a bad value of any field is listed in one field map with the
 * others' errors (`checkSettings`), and nothing is applied.
 */
export class UpdateApplicationSettingsDto {
  @Int(INVALID) default_projects_limit?: number;
  @Bool(INVALID) signup_enabled?: boolean;
  @Bool(INVALID) signin_enabled?: boolean;
  @Bool(INVALID) gravatar_enabled?: boolean;
  /** The spec's name for `gravatar_enabled` (wins when both are given). */
  @Bool(INVALID) avatar_enabled?: boolean;
  @Bool(INVALID) user_oauth_applications?: boolean;
  @Bool(INVALID) allow_local_requests_from_hooks_and_services?: boolean;
  @Str(INVALID) sign_in_text?: string;
  @Str(INVALID) home_page_url?: string;
  @Str(INVALID) after_sign_out_path?: string;
  /** 0, 1 or 2. */
  @Int(INVALID) default_branch_protection?: number;
  /** 0, 10, 20 (1 and 2 read as 10 and 20). */
  @Int(INVALID) default_project_visibility?: number;
  @Int(INVALID) default_snippet_visibility?: number;
  @Int(INVALID) default_group_visibility?: number;
  @IntList({ ...INVALID, min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }) restricted_visibility_levels?: number[];
  @Int(INVALID) max_attachment_size?: number;
  @Int(INVALID) session_expire_delay?: number;
  @Int(INVALID) container_registry_token_expire_delay?: number;
  @List(INVALID) restricted_signup_domains?: string[];
  /** Another name of `restricted_signup_domains` (wins when both are given). */
  @List(INVALID) domain_whitelist?: string[];
}
