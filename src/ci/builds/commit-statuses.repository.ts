import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../../common/pagination/pagination';
import { manyWithTotal } from '../../database/joined-rows';
import { Tx } from '../../database/transactions';
import { CommitStatus } from './commit-status.entity';

export interface StatusFilter {
  ref?: string;
  stage?: string;
  name?: string;
  /** Every status, not only the latest per name and ref. */
  all?: boolean;
}

/** The queries of the commit statuses API on `commit_statuses` (a build's own status is written by BuildsRepository). */
@Injectable()
export class CommitStatusesRepository {
  constructor(@InjectRepository(CommitStatus) private readonly statuses: Repository<CommitStatus>) {}

  /** Every status of a commit (for its combined status). */
  statusesOf(projectId: number, sha: string): Promise<CommitStatus[]> {
    return this.statuses.find({ where: { projectId, sha } });
  }

  /** A page of a commit's statuses, newest first: the latest per name and ref unless `all`. */
  listStatuses(projectId: number, sha: string, f: StatusFilter, page: PageRequest): Promise<[CommitStatus[], number]> {
    const qb = this.statuses.createQueryBuilder('s').where('s.project_id = :pid AND s.sha = :sha', { pid: projectId, sha });
    if (f.ref) qb.andWhere('s.ref = :ref', { ref: f.ref });
    if (f.stage) qb.andWhere('s.stage = :stage', { stage: f.stage });
    if (f.name) qb.andWhere('s.name = :name', { name: f.name });
    if (!f.all) {
      qb.andWhere(`s.id IN (SELECT max(id) FROM commit_statuses WHERE project_id = :pid AND sha = :sha GROUP BY name, coalesce(ref, ''))`);
    }
    return manyWithTotal(qb.orderBy('s.id', 'DESC').offset(page.offset).limit(page.perPage));
  }

  /** Serialises status writes for one commit and name until the transaction ends. */
  async lockStatusName(tx: Tx, projectId: number, sha: string, name: string): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('status:' || $1 || ':' || $2 || ':' || $3))`, [projectId, sha, name]);
  }

  /** The newest pending or running status of this name and ref, which a new state updates. */
  openStatus(tx: Tx, projectId: number, sha: string, name: string, ref: string | null, stage = 'external'): Promise<CommitStatus | null> {
    const q = tx
      .getRepository(CommitStatus)
      .createQueryBuilder('s')
      .where('s.project_id = :projectId AND s.sha = :sha AND s.name = :name AND s.stage = :stage', { projectId, sha, name, stage })
      .andWhere(ref === null ? 's.ref IS NULL' : 's.ref = :ref', { ref })
      .andWhere(`s.status IN ('pending', 'running')`)
      // only generic statuses (GitLab's GenericCommitStatus): CI builds are commit statuses too
      .andWhere('NOT EXISTS (SELECT 1 FROM ci_builds b WHERE b.id = s.id)')
      .orderBy('s.id', 'DESC');
    return q.getOne();
  }

  newStatus(values: Partial<CommitStatus>): CommitStatus {
    return this.statuses.create(values);
  }

  saveStatus(tx: Tx, row: CommitStatus): Promise<CommitStatus> {
    return tx.getRepository(CommitStatus).save(row);
  }
}
