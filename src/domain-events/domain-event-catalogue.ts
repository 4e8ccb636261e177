import type { RefUpdate } from '../git/smart-http';

/**
 * The catalogue of domain events: every event name and its payload type, in one place. `emit` and
 * `@OnDomainEvent` are typed from it, so an emitter and its handlers cannot disagree on a payload.
 * (The mechanism and how to add a handler: see domain-events.ts.)
 *
 * Payloads are plain data (they travel as JSON through the queue for durable handlers; Dates come back
 * as Dates). Carry ids (of the thing, the actor, the project) rather than rows: a durable handler runs
 * later and reads what it needs; destroy events carry a snapshot because the row is gone.
 */

/** A push that moved refs, after its events were recorded. */
export interface PushReceived {
  projectId: number;
  userId: number;
  updates: RefUpdate[];
  /** GitLab's push data of each update (same order), when the push service built it. */
  data?: Record<string, unknown>[];
}

/** The fields of a record the hooks need, as it was (destroy events carry it: the row is gone). */
export interface ProjectSnapshot {
  id: number;
  name: string;
  path: string;
  namespaceId: number;
  visibilityLevel: number;
  createdAt: Date;
  updatedAt: Date;
}
export interface UserSnapshot {
  id: number;
  name: string;
  username: string;
  email: string;
  createdAt: Date;
  updatedAt: Date;
}
export interface KeySnapshot {
  id: number;
  key: string;
  userId: number | null;
  createdAt: Date;
  updatedAt: Date;
}
export interface GroupSnapshot {
  id: number;
  name: string;
  path: string;
  ownerId: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What the CI area passes with `build.changed` (see webhooks/hook-payloads.ts, buildHookPayload). */
export interface BuildHookInput {
  id: number;
  name: string;
  stage: string;
  status: string;
  ref: string;
  tag: boolean;
  beforeSha: string | null;
  sha: string;
  startedAt: Date | null;
  finishedAt: Date | null;
  allowFailure: boolean;
  userId: number | null;
  commit: {
    id: number;
    sha: string;
    message: string;
    authorName: string;
    authorEmail: string;
    status: string;
    startedAt: Date | null;
    finishedAt: Date | null;
  };
}

/** What an issue or merge request hook needs. */
export type ObjectAction = 'open' | 'update' | 'close' | 'reopen' | 'merge';

/**
 * The CI outcome of a commit changed: `status` is the combined status of every latest status of
 * `sha` in the project (GitLab's pipeline status). Commit statuses and finished pipelines emit it.
 */
export interface CommitStatusChanged {
  projectId: number;
  sha: string;
  status: string | null;
}

/** What the activity feed shows (GitLab's `events` table): an action of a user on a project. */
export type ActivityAction = 'created' | 'updated' | 'closed' | 'reopened' | 'pushed' | 'commented' | 'merged' | 'joined' | 'left' | 'destroyed' | 'imported';

/** One row of the activity feed, as the area that made the change describes it. */
export interface ActivityRecord {
  projectId: number;
  authorId: number | null;
  action: ActivityAction;
  targetId?: number | null;
  targetType?: string | null;
  targetTitle?: string | null;
  title?: string | null;
  data?: Record<string, unknown> | null;
}

export interface DomainEventCatalogue {
  /**
   * Something the activity feed shows happened (the feed, events/, records it in the same transaction:
   * emitted with `emit(tx, …)` the rows are part of the change; with `emitCommitted` they are written
   * in a transaction of their own, and a failure is logged without undoing the change).
   */
  'activity.recorded': { events: ActivityRecord[] };

  /** Refs moved (git over HTTP or SSH, the files API, merges, branch and tag creation). */
  'push.received': PushReceived;
  /** A commit's combined CI status may have changed (in-process only: emitted after the commit). */
  'commit_status.changed': CommitStatusChanged;

  /** `userId`: the project's creator (its first master); `actorId`: who created it (an administrator creating it for a user). */
  'project.created': { project: ProjectSnapshot; userId: number | null; actorId?: number };
  'project.destroyed': { project: ProjectSnapshot };
  'project.renamed': { project: ProjectSnapshot; oldPathWithNamespace: string };
  'project.transferred': { project: ProjectSnapshot; oldPathWithNamespace: string };
  'user.created': { user: UserSnapshot };
  'user.destroyed': { user: UserSnapshot };
  'key.created': { key: KeySnapshot };
  'key.destroyed': { key: KeySnapshot };
  /** A secondary email was added to a user (by themselves or an administrator). */
  'email.created': { emailId: number; userId: number; email: string };
  /**
   * Addresses a user no longer has as they had them: a secondary email deleted, or the primary email
   * changed (`removed` holds the old primary). Whatever was derived from them (the notification
   * email) goes back to the primary address, as GitLab 8.17's `update_secondary_emails!`.
   */
  'user.emails_changed': { userId: number; removed: string[] };
  'group.created': { group: GroupSnapshot };
  'group.destroyed': { group: GroupSnapshot };
  'project_member.added': { projectId: number; userId: number; accessLevel: number };
  'project_member.removed': { projectId: number; userId: number; accessLevel: number };
  'group_member.added': { groupId: number; userId: number; accessLevel: number };
  'group_member.removed': { groupId: number; userId: number; accessLevel: number };

  /** Any change of an issue, with GitLab's hook action (the webhooks hear of this one). */
  'issue.changed': { issueId: number; userId: number; action: ObjectAction };
  'issue.created': { issueId: number; projectId: number; userId: number };
  'issue.closed': { issueId: number; projectId: number; userId: number };
  'issue.reopened': { issueId: number; projectId: number; userId: number };
  /** The assignee changed (`previousAssigneeId`: the one before; the new one is on the row). Notifications mail both. */
  'issue.reassigned': { issueId: number; projectId: number; userId: number; previousAssigneeId: number | null };
  /** A comment (on an issue, merge request, snippet or commit); `projectId` null for personal snippets. */
  'note.created': { noteId: number; projectId: number | null; userId: number };
  /** A comment's text was changed (by its author or a master: `userId`). */
  'note.updated': { noteId: number; projectId: number | null; userId: number };

  /** The MR area emits this with the MR as GitLab's `object_attributes` (see webhooks/hook-payloads.ts). */
  'merge_request.changed': { projectId: number; userId: number; action: ObjectAction; attributes: Record<string, unknown> };
  'merge_request.merged': { mergeRequestId: number; projectId: number; userId: number };
  /** The assignee changed (see issue.reassigned). */
  'merge_request.reassigned': { mergeRequestId: number; projectId: number; userId: number; previousAssigneeId: number | null };

  /** A pipeline was created with its builds (all `created`, GitLab 8.17): environments make theirs (8.17's CreatePipelineBuildsService). */
  'pipeline.created': { pipelineId: number; projectId: number };
  /** Every build status change (see webhooks/hook-payloads.ts, buildHookPayload). */
  'build.changed': { projectId: number; build: BuildHookInput };
  /** A build ended failed (`userId`: who triggered it, when known). */
  'build.failed': { buildId: number; projectId: number; userId: number | null; pipelineId: number };
}

export type DomainEventName = keyof DomainEventCatalogue;

// Snapshots: only the fields the payloads need go into a job (never tokens or digests).

export function projectSnapshot(p: ProjectSnapshot): ProjectSnapshot {
  return {
    id: p.id,
    name: p.name,
    path: p.path,
    namespaceId: p.namespaceId,
    visibilityLevel: p.visibilityLevel,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

export function userSnapshot(u: UserSnapshot): UserSnapshot {
  return { id: u.id, name: u.name, username: u.username, email: u.email, createdAt: u.createdAt, updatedAt: u.updatedAt };
}

export function keySnapshot(k: KeySnapshot): KeySnapshot {
  return { id: k.id, key: k.key, userId: k.userId, createdAt: k.createdAt, updatedAt: k.updatedAt };
}

export function groupSnapshot(g: GroupSnapshot): GroupSnapshot {
  return { id: g.id, name: g.name, path: g.path, ownerId: g.ownerId, createdAt: g.createdAt, updatedAt: g.updatedAt };
}
