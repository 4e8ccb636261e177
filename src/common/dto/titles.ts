import { ValidationFailed } from '../errors/domain-errors';

/** A title as GitLab validates it: trimmed, never blank, at most 255 characters (field-map errors). */
export function checkTitle(title: string): string;
export function checkTitle(title: string | undefined): string | undefined;
export function checkTitle(title: string | undefined): string | undefined {
  if (title === undefined) return undefined;
  const t = title.trim();
  if (t === '') throw new ValidationFailed({ title: ["can't be blank"] });
  if (t.length > 255) throw new ValidationFailed({ title: ['is too long (maximum is 255 characters)'] });
  return t;
}
