import { Injectable, PipeTransform } from '@nestjs/common';
import { parseId } from './params';

/**
 * A project as a request names it, parsed at the edge (`@Param('id', ProjectRefParam)`): by id, by
 * `namespace/path` (the last `/` splits them), or `NO_PROJECT` when the text cannot name one. The
 * resolver turns `NO_PROJECT` into `404 Project Not Found` at the point it looks the project up, so
 * what a request answers, and in which order (401, then 404, then 400), is the same for any text.
 */
export type ProjectRef = { id: number } | { namespace: string; path: string } | NoProject;

/** The `ProjectRef` of a text that names no project (too long, a control character, no `/`, …). */
export interface NoProject {
  readonly none: true;
}

export const NO_PROJECT: NoProject = Object.freeze({ none: true });

/** A `ProjectRef` that can be looked up (anything but `NO_PROJECT`). */
export type ProjectKey = Exclude<ProjectRef, NoProject>;

/** The key to look `ref` up by, or undefined for `NO_PROJECT`. */
export function projectKey(ref: ProjectRef): ProjectKey | undefined {
  return 'none' in ref ? undefined : ref;
}

/**
 * The one parser of a project reference (an API `:id`, a git path over HTTP or SSH, a
 * `namespace/path#123` in a commit message): digits are an id, else `namespace/path`.
 */
export function parseProjectRef(raw: string): ProjectRef {
  // eslint-disable-next-line no-control-regex -- a project path never holds control characters
  if (raw.length > 512 || /[\x00-\x1f]/.test(raw)) return NO_PROJECT;
  const id = parseId(raw);
  if (id !== undefined) return { id };
  const slash = raw.lastIndexOf('/');
  if (slash <= 0) return NO_PROJECT;
  return { namespace: raw.slice(0, slash), path: raw.slice(slash + 1) };
}

/** `@Param('id', ProjectRefParam) project: ProjectRef`: a project `:id` (a number or `NAMESPACE%2FPATH`). */
@Injectable()
export class ProjectRefParam implements PipeTransform<string, ProjectRef> {
  transform(value: string): ProjectRef {
    return parseProjectRef(value);
  }
}

/** A group as a request names it: by id (digits) or by path (any other text; case-insensitive). */
export type GroupRef = { id: number } | { path: string };

/** The one parser of a group reference (`/groups/:id`, `/groups/:id/members`, …). */
export function parseGroupRef(raw: string): GroupRef {
  const id = parseId(raw);
  return id !== undefined ? { id } : { path: raw };
}

/** `@Param('id', GroupRefParam) group: GroupRef`: a group `:id` (a number or a path). */
@Injectable()
export class GroupRefParam implements PipeTransform<string, GroupRef> {
  transform(value: string): GroupRef {
    return parseGroupRef(value);
  }
}
