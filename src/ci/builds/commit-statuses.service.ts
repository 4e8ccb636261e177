import { Injectable } from '@nestjs/common';
import { PageRequest } from '../../common/pagination/pagination';
import { Tx } from '../../database/transactions';
import { CommitStatus } from './commit-status.entity';
import { CommitStatusesRepository, StatusFilter } from './commit-statuses.repository';

export type { StatusFilter } from './commit-statuses.repository';

const FINISHED = ['success', 'failed', 'canceled'];

/** An external status as `POST /projects/:id/statuses/:sha` sets it (already validated). */
export interface ExternalStatus {
  projectId: number;
  sha: string;
  ref: string | null;
  name: string;
  state: string;
  /** Null: no user (a status the server itself sets for a build whose user is gone). */
  authorId: number | null;
  targetUrl: string | null;
  description: string | null;
  at: Date;
  /** `external` unless given (the `pages:deploy` status is in stage `deploy`, as GitLab 8.17's). */
  stage?: string;
  allowFailure?: boolean;
}

/**
 * Commit statuses for the repository area's statuses API: a commit's statuses, and the external
 * statuses that CI systems post. The builds area owns `commit_statuses` (a build is a commit status).
 */
@Injectable()
export class CommitStatusesService {
  constructor(private readonly statuses: CommitStatusesRepository) {}

  /** Every status of a commit (for its combined status). */
  ofCommit(projectId: number, sha: string): Promise<CommitStatus[]> {
    return this.statuses.statusesOf(projectId, sha);
  }

  /** A page of a commit's statuses, newest first: the latest per name and ref unless `all`. */
  list(projectId: number, sha: string, f: StatusFilter, page: PageRequest): Promise<[CommitStatus[], number]> {
    return this.statuses.listStatuses(projectId, sha, f, page);
  }

  /**
   * Adds an external status, or updates the pending or running one with the same name and ref, in the
   * caller's transaction (writes for one commit and name are serialised until it ends).
   */
  async setExternal(tx: Tx, s: ExternalStatus): Promise<CommitStatus> {
    await this.statuses.lockStatusName(tx, s.projectId, s.sha, s.name);
    const existing = await this.statuses.openStatus(tx, s.projectId, s.sha, s.name, s.ref, s.stage);
    const row =
      existing ??
      this.statuses.newStatus({
        projectId: s.projectId,
        sha: s.sha,
        ref: s.ref,
        name: s.name,
        stage: s.stage ?? 'external',
        allowFailure: s.allowFailure ?? false,
        startedAt: null,
        finishedAt: null,
      });
    row.status = s.state;
    if (s.allowFailure !== undefined) row.allowFailure = s.allowFailure;
    row.authorId = s.authorId;
    if (s.targetUrl !== null) row.targetUrl = s.targetUrl;
    else if (!existing) row.targetUrl = null;
    if (s.description !== null) row.description = s.description;
    else if (!existing) row.description = null;
    if (s.state === 'running' && !row.startedAt) row.startedAt = s.at;
    if (FINISHED.includes(s.state)) row.finishedAt = s.at;
    if (s.state === 'pending' || s.state === 'running') row.finishedAt = null;
    return this.statuses.saveStatus(tx, row);
  }
}
