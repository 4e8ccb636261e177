import { visibilityLevel } from '../application-settings/application-settings.service';
import { ValidationFailed } from '../common/errors/domain-errors';

const VISIBILITY_LABEL: Record<number, string> = { 0: 'Private', 10: 'Internal', 20: 'Public' };
const INT = /^[+-]?\d{1,15}$/;

/** A file name: never blank, at most 255 characters (field-map errors). */
export function checkFileName(fileName: string | undefined): void {
  if (fileName === undefined) return;
  if (fileName === '') throw new ValidationFailed({ file_name: ["can't be blank"] });
  if (fileName.length > 255) throw new ValidationFailed({ file_name: ['is too long (maximum is 255 characters)'] });
}

/**
 * A `visibility_level` value sent (not null): 0, 10, 20 (1 and 2 read as 10 and 20), as a number or
 * a string of digits (of an array, the last item); anything else `is not included in the list`.
 */
export function snippetVisibility(raw: unknown): number {
  const v: unknown = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  let n: number | undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v)) n = v;
  else if (typeof v === 'string' && INT.test(v.trim())) n = Number(v.trim());
  const level = n === undefined ? undefined : visibilityLevel(n);
  if (level === undefined) throw new ValidationFailed({ visibility_level: ['is not included in the list'] });
  return level;
}

/** Levels the administrator restricted are refused for everyone else. */
export function checkRestrictedVisibility(admin: boolean, level: number, restricted: number[] | null | undefined): void {
  if (!admin && restricted?.includes(level)) {
    throw new ValidationFailed({
      visibility_level: [`${VISIBILITY_LABEL[level]} visibility has been restricted by your GitLab administrator`],
    });
  }
}
