import { randomInt } from 'node:crypto';
import type { ValidationMap } from '../../common/errors/domain-errors';

/**
 * GitLab 8.17's environment rules (app/models/environment.rb, lib/gitlab/regex.rb,
 * app/validators/addressable_url_validator.rb, lib/expand_variables.rb), as pure functions: the name
 * and URL checks with their model messages, the slug, and `$VARIABLE` expansion of a job's
 * environment name and URL.
 */

export const NAME_MAX = 255;
export const URL_MAX = 255;
export const SLUG_MAX = 24;

/** `Gitlab::Regex.environment_name_regex` and its message. */
const NAME = /^[a-zA-Z0-9_\\/${}. -]+$/;
export const NAME_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces";

/**
 * `URI.regexp(%w(http https ssh git))` anchored (what `addressable_url: true` checks first): one of the
 * four schemes in lower case, a colon, then RFC 2396's URI characters (reserved, unreserved or `%XX`),
 * with at most one `#fragment`. No spaces, quotes, brackets or backslashes.
 */
const URIC = String.raw`(?:[A-Za-z0-9\-_.!~*'();/?:@&=+$,]|%[0-9A-Fa-f]{2})`;
const URL = new RegExp(`^(?:http|https|ssh|git):${URIC}+(?:#${URIC}*)?$`);

export interface EnvironmentFields {
  name: string;
  externalUrl: string | null;
}

/**
 * The model's errors for a name and URL, in Rails' order (presence, uniqueness, length, format);
 * `taken` says which of them another environment of the project already has. Empty when valid.
 */
export function environmentErrors(f: EnvironmentFields, taken: { name?: boolean; externalUrl?: boolean } = {}): ValidationMap {
  const errors: ValidationMap = {};
  const name: string[] = [];
  if (f.name.trim() === '') name.push("can't be blank");
  if (taken.name) name.push('has already been taken');
  if (f.name.length > NAME_MAX) name.push(`is too long (maximum is ${NAME_MAX} characters)`);
  if (!NAME.test(f.name)) name.push(NAME_MESSAGE);
  if (name.length) errors.name = name;
  if (f.externalUrl !== null) {
    const url: string[] = [];
    if (taken.externalUrl) url.push('has already been taken');
    if (f.externalUrl.length > URL_MAX) url.push(`is too long (maximum is ${URL_MAX} characters)`);
    if (!validUrl(f.externalUrl)) url.push('must be a valid URL');
    if (url.length) errors.external_url = url;
  }
  return errors;
}

/** `addressable_url: true` (http, https, ssh and git URLs). */
export function validUrl(url: string): boolean {
  return URL.test(url);
}

/** `nullify_external_url`: a blank URL is no URL. */
export function normalizeUrl(url: string | null | undefined): string | null {
  return url === undefined || url === null || url.trim() === '' ? null : url;
}

/** `set_environment_type`: the first segment of a name with a `/` (`review/app` → `review`), else null. */
export function environmentType(name: string): string | null {
  const parts = name.split('/');
  return parts.length > 1 ? parts[0] : null;
}

const SUFFIX_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Six random lower-case letters and digits (8.17's `random_suffix`). */
export function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 6; i++) s += SUFFIX_CHARS[randomInt(SUFFIX_CHARS.length)];
  return s;
}

/**
 * 8.17's `generate_slug`: lower-case letters, digits and `-`, starting with a letter, no repeated or
 * trailing `-`, at most 24 characters; when that changed the name, it is cut to 17 characters and a
 * random six-character suffix keeps it unique (`review/app` → `review-app-x1y2z3`). Generated once:
 * a renamed environment keeps its slug.
 */
export function generateSlug(name: string, suffix: () => string = randomSuffix): string {
  let slug = name.toLowerCase().replace(/[^a-z0-9]/g, '-');
  if (!/^[a-z]/.test(slug)) slug = `env-${slug}`;
  slug = slug.replace(/-+/g, '-').slice(0, SLUG_MAX);
  if (slug.endsWith('-')) slug = slug.slice(0, -1);
  if (slug !== name) {
    slug = slug.slice(0, 17);
    if (!slug.endsWith('-')) slug += '-';
    slug += suffix();
  }
  return slug;
}

export interface Variable {
  key: string;
  value: string;
}

/**
 * `ExpandVariables.expand`: `$NAME`, `${NAME}` and `%NAME%` replaced by the variable's value (the last
 * one of that key wins, as the hash it builds), an unknown one by nothing.
 */
export function expandVariables(text: string, variables: Variable[]): string {
  const values = new Map<string, string>();
  for (const v of variables) values.set(v.key, v.value);
  return text.replace(
    /\$([a-zA-Z_][a-zA-Z0-9_]*)|\$\{([a-zA-Z_][a-zA-Z0-9_]*)\}|%([a-zA-Z_][a-zA-Z0-9_]*)%/g,
    (_m, a?: string, b?: string, c?: string) => values.get(a ?? b ?? c ?? '') ?? '',
  );
}
