import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { RefUpdate } from '../git/smart-http';

/** A push that moved refs, after its events were recorded. The CI and hooks areas subscribe. */
export interface PushReceived {
  projectId: number;
  userId: number;
  updates: RefUpdate[];
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

  onPushReceived(listener: (e: PushReceived) => void | Promise<void>): void {
    this.emitter.on('push.received', (e: PushReceived) => {
      Promise.resolve()
        .then(() => listener(e))
        .catch(() => undefined);
    });
  }

  pushReceived(e: PushReceived): void {
    this.emitter.emit('push.received', e);
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
