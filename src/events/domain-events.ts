import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { RefUpdate } from '../git/smart-http';

/** A push that moved refs, after its events were recorded. The CI and hooks areas subscribe. */
export interface PushReceived {
  projectId: number;
  userId: number;
  updates: RefUpdate[];
  /** GitLab's push data of each update (same order), when the push service built it. */
  data?: Record<string, unknown>[];
}

/** The fields of a record the hooks need, as it was (destroy events carry it: the row is gone). */
export interface ProjectSnapshot { id: number; name: string; path: string; namespaceId: number; visibilityLevel: number; createdAt: Date; updatedAt: Date }
export interface UserSnapshot { id: number; name: string; username: string; email: string; createdAt: Date; updatedAt: Date }
export interface KeySnapshot { id: number; key: string; userId: number | null; createdAt: Date; updatedAt: Date }
export interface GroupSnapshot { id: number; name: string; path: string; ownerId: number | null; createdAt: Date; updatedAt: Date }

/** What the CI area passes with `build.changed` (see hooks/hook-payloads.ts, buildHookPayload). */
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
  commit: { id: number; sha: string; message: string; authorName: string; authorEmail: string; status: string; startedAt: Date | null; finishedAt: Date | null };
}

/** What an issue or merge request hook needs (the MR and CI areas emit these once they exist). */
export type ObjectAction = 'open' | 'update' | 'close' | 'reopen' | 'merge';

/**
 * Every domain event and its payload. The events hooks hear of go through the outbox (HookOutbox, in
 * the transaction of the change); only `push.received` (CI, merge requests) and the commit status
 * are also emitted in-process after the commit, where listeners run asynchronously and their
 * failures never reach the emitter.
 */
export interface DomainEventMap {
  'push.received': PushReceived;
  'project.created': { project: ProjectSnapshot };
  'project.destroyed': { project: ProjectSnapshot };
  'project.renamed': { project: ProjectSnapshot; oldPathWithNamespace: string };
  'project.transferred': { project: ProjectSnapshot; oldPathWithNamespace: string };
  'user.created': { user: UserSnapshot };
  'user.destroyed': { user: UserSnapshot };
  'key.created': { key: KeySnapshot };
  'key.destroyed': { key: KeySnapshot };
  'group.created': { group: GroupSnapshot };
  'group.destroyed': { group: GroupSnapshot };
  'project_member.added': { projectId: number; userId: number; accessLevel: number };
  'project_member.removed': { projectId: number; userId: number; accessLevel: number };
  'group_member.added': { groupId: number; userId: number; accessLevel: number };
  'group_member.removed': { groupId: number; userId: number; accessLevel: number };
  'issue.changed': { issueId: number; userId: number; action: ObjectAction };
  'note.created': { noteId: number; userId: number };
  /** The MR area emits this with the MR as GitLab's `object_attributes` (see hooks/hook-payloads.ts). */
  'merge_request.changed': { projectId: number; userId: number; action: ObjectAction; attributes: Record<string, unknown> };
  /** The CI area emits this on every build status change (see hooks/hook-payloads.ts, buildHookPayload). */
  'build.changed': { projectId: number; build: BuildHookInput };
}

/**
 * The CI outcome of a commit changed: `status` is the combined status of every latest status of
 * `sha` in the project (GitLab's pipeline status). Commit statuses emit it today; the CI area's
 * pipelines emit the same event when they finish, so merge-when-build-succeeds needs no change.
 */
export interface CommitStatusChanged {
  projectId: number;
  sha: string;
  status: string | null;
}

/** In-process domain events (emitted after the change is committed). */
@Injectable()
export class DomainEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(50);
  }

  on<K extends keyof DomainEventMap>(name: K, listener: (e: DomainEventMap[K]) => void | Promise<void>): void {
    this.emitter.on(name, (e: DomainEventMap[K]) => {
      Promise.resolve()
        .then(() => listener(e))
        .catch(() => undefined);
    });
  }

  emit<K extends keyof DomainEventMap>(name: K, payload: DomainEventMap[K]): void {
    this.emitter.emit(name, payload);
  }

  onPushReceived(listener: (e: PushReceived) => void | Promise<void>): void {
    this.on('push.received', listener);
  }

  pushReceived(e: PushReceived): void {
    this.emit('push.received', e);
  }

  onCommitStatusChanged(listener: (e: CommitStatusChanged) => void | Promise<void>): void {
    this.emitter.on('commit-status.changed', (e: CommitStatusChanged) => {
      Promise.resolve()
        .then(() => listener(e))
        .catch(() => undefined);
    });
  }

  commitStatusChanged(e: CommitStatusChanged): void {
    this.emitter.emit('commit-status.changed', e);
  }
}
