import { ProjectAbility } from '../common/policy/policy';
import { Project } from '../projects/project.entity';
import { NoteableType } from '../notes/note.entity';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

/** A noteable the caller may read, as the notes service needs it. */
export interface Noteable {
  project: Project;
  abilities: Set<ProjectAbility>;
  type: NoteableType;
  id: number;
  title: string;
}

/** Finds a readable noteable (or throws its area's 404/403). One per kind; the notes service holds the map. */
export type NoteableFinder = (user: Caller, projectRef: ProjectRef, id: number) => Promise<Noteable>;

/** Path segments → kinds. `merge_request` is the legacy singular path old clients use. */
export const NOTEABLE_PATHS: Readonly<Record<string, NoteableType>> = {
  issues: 'Issue',
  snippets: 'Snippet',
  merge_requests: 'MergeRequest',
  merge_request: 'MergeRequest',
};

/** Kinds whose legacy `comments` routes exist (GitLab 8.8 had them for merge requests only). */
export const COMMENT_KINDS: ReadonlySet<NoteableType> = new Set<NoteableType>(['MergeRequest']);
