import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';
import { ApplicationSettings } from './application-settings.entity';

const CACHE_MS = 5000;
const VISIBILITY_INPUT: Record<number, number> = { 0: 0, 1: 10, 2: 20, 10: 10, 20: 20 };

/** Reads 0/10/20 (and the documented 1/2 spelling of internal/public) as a visibility level. */
export function visibilityLevel(n: number): number | undefined {
  return VISIBILITY_INPUT[n];
}

/**
 * The instance's admin-editable settings, read by every area through this one service. Kept in
 * memory for a few seconds so that hot paths (presenters' avatar URLs, sign-in) cost no query.
 */
@Injectable()
export class ApplicationSettingsService {
  private cached?: { value: ApplicationSettings; at: number };

  constructor(private readonly ds: DataSource) {}

  async get(): Promise<ApplicationSettings> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.value;
    const repo = this.ds.getRepository(ApplicationSettings);
    let row = await repo.findOne({ where: {}, order: { id: 'ASC' } });
    if (!row) row = await repo.save(repo.create({}));
    this.cached = { value: row, at: Date.now() };
    return row;
  }

  /** Re-reads the settings now, starting a fresh cache window. */
  async reload(): Promise<ApplicationSettings> {
    this.cached = undefined;
    return this.get();
  }

  /** Applies the given fields; `null` or absent means "leave as is". Invalid values: 400 with a field map. */
  async update(p: Params): Promise<ApplicationSettings> {
    const current = await this.get();
    const next: Partial<ApplicationSettings> = {};
    const errors: ValidationMap = {};
    const fail = (field: string, msg: string) => ((errors[field] as string[] | undefined) ?? (errors[field] = [])).push(msg);
    const bad = (field: string, read: () => void) => {
      try {
        read();
      } catch {
        fail(field, 'is invalid');
      }
    };

    bad('default_projects_limit', () => {
      const v = p.int('default_projects_limit');
      if (v === undefined) return;
      if (v < 0 || v > 1_000_000) fail('default_projects_limit', 'must be between 0 and 1000000');
      else next.defaultProjectsLimit = v;
    });
    const bools: [string, keyof ApplicationSettings][] = [
      ['signup_enabled', 'signupEnabled'],
      ['signin_enabled', 'signinEnabled'],
      ['gravatar_enabled', 'gravatarEnabled'],
      ['avatar_enabled', 'gravatarEnabled'],
      ['user_oauth_applications', 'userOauthApplications'],
      ['allow_local_requests_from_hooks_and_services', 'allowLocalRequestsFromHooksAndServices'],
    ];
    for (const [name, key] of bools) {
      bad(name, () => {
        const v = p.bool(name);
        if (v !== undefined) (next as Record<string, unknown>)[key] = v;
      });
    }
    const texts: [string, keyof ApplicationSettings, number][] = [
      ['sign_in_text', 'signInText', 65535],
      ['home_page_url', 'homePageUrl', 255],
      ['after_sign_out_path', 'afterSignOutPath', 255],
    ];
    for (const [name, key, max] of texts) {
      bad(name, () => {
        const v = p.string(name);
        if (v === undefined) return;
        if (v.length > max) return fail(name, `is too long (maximum is ${max} characters)`);
        if (name !== 'sign_in_text' && v !== '' && !/^https?:\/\/[^\s]+$/i.test(v)) {
          return fail(name, 'is not a valid URL');
        }
        (next as Record<string, unknown>)[key] = v === '' ? null : v;
      });
    }
    bad('default_branch_protection', () => {
      const v = p.int('default_branch_protection');
      if (v === undefined) return;
      if (![0, 1, 2].includes(v)) fail('default_branch_protection', 'is not included in the list');
      else next.defaultBranchProtection = v;
    });
    const levels: [string, keyof ApplicationSettings][] = [
      ['default_project_visibility', 'defaultProjectVisibility'],
      ['default_snippet_visibility', 'defaultSnippetVisibility'],
      ['default_group_visibility', 'defaultGroupVisibility'],
    ];
    for (const [name, key] of levels) {
      bad(name, () => {
        const v = p.int(name);
        if (v === undefined) return;
        const level = visibilityLevel(v);
        if (level === undefined) fail(name, 'is not included in the list');
        else (next as Record<string, unknown>)[key] = level;
      });
    }
    bad('restricted_visibility_levels', () => {
      const v = p.intArray('restricted_visibility_levels');
      if (v === undefined) return;
      const mapped = v.map(visibilityLevel);
      if (mapped.some((l) => l === undefined)) return fail('restricted_visibility_levels', 'is not included in the list');
      next.restrictedVisibilityLevels = [...new Set(mapped as number[])].sort((a, b) => a - b);
    });
    bad('max_attachment_size', () => {
      const v = p.int('max_attachment_size');
      if (v === undefined) return;
      if (v < 1 || v > 10_000) fail('max_attachment_size', 'must be between 1 and 10000');
      else next.maxAttachmentSize = v;
    });
    for (const [name, key] of [
      ['session_expire_delay', 'sessionExpireDelay'],
      ['container_registry_token_expire_delay', 'containerRegistryTokenExpireDelay'],
    ] as [string, keyof ApplicationSettings][]) {
      bad(name, () => {
        const v = p.int(name);
        if (v === undefined) return;
        if (v < 0 || v > 10_000_000) fail(name, 'must be greater than or equal to 0');
        else (next as Record<string, unknown>)[key] = v;
      });
    }
    for (const name of ['restricted_signup_domains', 'domain_whitelist']) {
      bad(name, () => {
        const v = p.stringArray(name);
        if (v === undefined) return;
        const invalid = v.filter((d) => !/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(d));
        if (invalid.length) return fail(name, `${invalid[0]} is not a valid domain`);
        next.restrictedSignupDomains = v.map((d) => d.toLowerCase());
      });
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    if (Object.keys(next).length === 0) return current;
    const repo = this.ds.getRepository(ApplicationSettings);
    await repo.update({ id: current.id }, next);
    this.cached = undefined;
    return this.get();
  }
}
