import { ValidationFailed, ValidationMap } from '../common/errors/domain-errors';

/** GitLab's label title rule: no `&`, `?` or `,`. */
const TITLE = /^[^&?,]+$/;
/** `#` and 3 or 6 hex digits. */
const COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
/** Colour of labels created implicitly by issue `labels` (GitLab's Label::DEFAULT_COLOR). */
export const DEFAULT_LABEL_COLOR = '#428BCA';

export function validLabelTitle(title: string): boolean {
  return title.length > 0 && title.length <= 255 && TITLE.test(title);
}

/** A label's title and colour as GitLab validates them (field-map errors). */
export function checkLabel(v: { title?: string; color?: string }): void {
  const errors: ValidationMap = {};
  if (v.color !== undefined && !COLOR.test(v.color)) errors.color = ['must be a valid color code'];
  if (v.title !== undefined && !validLabelTitle(v.title)) errors.title = ['is invalid'];
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
}

/** 400 `{"labels": {"<title>": {"title": ["is invalid"]}}}` for titles GitLab would refuse (an issue's `labels`). */
export function checkLabelTitles(titles: string[]): void {
  const errors: ValidationMap = {};
  for (const t of titles) if (!validLabelTitle(t)) errors[t] = { title: ['is invalid'] };
  if (Object.keys(errors).length) throw new ValidationFailed({ labels: errors });
}
