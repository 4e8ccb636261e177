import { invalidFields } from '../../common/dto/fields';
import { ValidationFailed, ValidationMap } from '../../common/errors/domain-errors';
import { ApplicationSettings } from '../application-settings.entity';
import { UpdateApplicationSettingsDto } from './application-settings.dto';

const VISIBILITY_INPUT: Record<number, number> = { 0: 0, 1: 10, 2: 20, 10: 10, 20: 20 };

/** Reads 0/10/20 (and the documented 1/2 spelling of internal/public) as a visibility level. */
export function visibilityLevel(n: number): number | undefined {
  return VISIBILITY_INPUT[n];
}

type Dto = UpdateApplicationSettingsDto;
type Changes = Partial<ApplicationSettings>;

const BOOLS: [keyof Dto, keyof ApplicationSettings][] = [
  ['signup_enabled', 'signupEnabled'],
  ['signin_enabled', 'signinEnabled'],
  ['gravatar_enabled', 'gravatarEnabled'],
  ['avatar_enabled', 'gravatarEnabled'],
  ['user_oauth_applications', 'userOauthApplications'],
  ['allow_local_requests_from_hooks_and_services', 'allowLocalRequestsFromHooksAndServices'],
  ['shared_runners_enabled', 'sharedRunnersEnabled'],
];
const TEXTS: [keyof Dto, keyof ApplicationSettings, number][] = [
  ['sign_in_text', 'signInText', 65535],
  ['home_page_url', 'homePageUrl', 255],
  ['after_sign_out_path', 'afterSignOutPath', 255],
];
const LEVELS: [keyof Dto, keyof ApplicationSettings][] = [
  ['default_project_visibility', 'defaultProjectVisibility'],
  ['default_snippet_visibility', 'defaultSnippetVisibility'],
  ['default_group_visibility', 'defaultGroupVisibility'],
];
const DELAYS: [keyof Dto, keyof ApplicationSettings][] = [
  ['session_expire_delay', 'sessionExpireDelay'],
  ['container_registry_token_expire_delay', 'containerRegistryTokenExpireDelay'],
];
const DOMAIN = /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+$/i;

/**
 * Validates a settings update as GitLab's model does: every invalid field named at once in one
 * field map (in GitLab's order), nothing applied. Returns the changes for the entity.
 */
export function checkSettings(dto: Dto): Changes {
  const bad = invalidFields(dto);
  const next: Changes = {};
  const set = (key: keyof ApplicationSettings, v: unknown) => ((next as Record<string, unknown>)[key] = v);
  const errors: ValidationMap = {};
  const fail = (field: string, msg: string) => ((errors[field] as string[] | undefined) ?? (errors[field] = [])).push(msg);
  /** The field's value, or undefined when absent or (reported) bad. */
  const read = <K extends keyof Dto>(field: K & string): Dto[K] | undefined => {
    if (bad[field] !== undefined) {
      for (const m of bad[field]) fail(field, m);
      return undefined;
    }
    return dto[field];
  };

  const limit = read('default_projects_limit');
  if (limit !== undefined) {
    if (limit < 0 || limit > 1_000_000) fail('default_projects_limit', 'must be between 0 and 1000000');
    else next.defaultProjectsLimit = limit;
  }
  for (const [field, key] of BOOLS) {
    const v = read(field);
    if (v !== undefined) set(key, v);
  }
  for (const [field, key, max] of TEXTS) {
    const v = read(field) as string | undefined;
    if (v === undefined) continue;
    if (v.length > max) fail(field, `is too long (maximum is ${max} characters)`);
    else if (field !== 'sign_in_text' && v !== '' && !/^https?:\/\/[^\s]+$/i.test(v)) fail(field, 'is not a valid URL');
    else set(key, v === '' ? null : v);
  }
  const protection = read('default_branch_protection');
  if (protection !== undefined) {
    // GitLab 8.17's Gitlab::Access: 0 none, 1 developers can push, 2 full, 3 developers can merge
    if (![0, 1, 2, 3].includes(protection)) fail('default_branch_protection', 'is not included in the list');
    else next.defaultBranchProtection = protection;
  }
  for (const [field, key] of LEVELS) {
    const v = read(field) as number | undefined;
    if (v === undefined) continue;
    const level = visibilityLevel(v);
    if (level === undefined) fail(field, 'is not included in the list');
    else set(key, level);
  }
  const restricted = read('restricted_visibility_levels');
  if (restricted !== undefined) {
    const mapped = restricted.map(visibilityLevel);
    if (mapped.some((l) => l === undefined)) fail('restricted_visibility_levels', 'is not included in the list');
    else next.restrictedVisibilityLevels = [...new Set(mapped as number[])].sort((a, b) => a - b);
  }
  const attachment = read('max_attachment_size');
  if (attachment !== undefined) {
    if (attachment < 1 || attachment > 10_000) fail('max_attachment_size', 'must be between 1 and 10000');
    else next.maxAttachmentSize = attachment;
  }
  const artifacts = read('max_artifacts_size');
  if (artifacts !== undefined) {
    if (artifacts < 1) fail('max_artifacts_size', 'must be greater than 0');
    else if (artifacts > 1_000_000) fail('max_artifacts_size', 'must be less than or equal to 1000000');
    else next.maxArtifactsSize = artifacts;
  }
  const pages = read('max_pages_size');
  if (pages !== undefined) {
    if (pages < 1) fail('max_pages_size', 'must be greater than 0');
    else if (pages > 1_000_000) fail('max_pages_size', 'must be less than or equal to 1000000');
    else next.maxPagesSize = pages;
  }
  for (const [field, key] of DELAYS) {
    const v = read(field) as number | undefined;
    if (v === undefined) continue;
    if (v < 0 || v > 10_000_000) fail(field, 'must be greater than or equal to 0');
    else set(key, v);
  }
  for (const field of ['restricted_signup_domains', 'domain_whitelist'] as const) {
    const v = read(field);
    if (v === undefined) continue;
    const invalid = v.filter((d) => !DOMAIN.test(d));
    if (invalid.length) fail(field, `${invalid[0]} is not a valid domain`);
    else next.restrictedSignupDomains = v.map((d) => d.toLowerCase());
  }
  read('reset_runners_registration_token'); // an action, not a column: only its value is checked here
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return next;
}
