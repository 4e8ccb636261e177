import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { CommitComment, CommitStatus, ProtectedBranch, Release } from './repository.entities';
import { manyWithTotal } from '../database/joined-rows';

export interface StatusFilter {
  ref?: string;
  stage?: string;
  name?: string;
  /** Every status, not only the latest per name and ref. */
  all?: boolean;
}

/**
 * Every query of the repository area: protected branches, releases, commit comments and commit
 * statuses. Methods that write inside a transaction take the caller's `tx`.
 */
@Injectable()
export class RepositoryRecords {
  constructor(
    @InjectRepository(ProtectedBranch) private readonly protectedBranchesRepo: Repository<ProtectedBranch>,
    @InjectRepository(Release) private readonly releasesRepo: Repository<Release>,
    @InjectRepository(CommitComment) private readonly commentsRepo: Repository<CommitComment>,
    @InjectRepository(CommitStatus) private readonly statusesRepo: Repository<CommitStatus>,
  ) {}

  // ------------------------------------------------------------ protected branches

  /** A project's protected branches (names and `*` patterns), by name. */
  protectedBranches(projectId: number): Promise<ProtectedBranch[]> {
    return this.protectedBranchesRepo.find({ where: { projectId }, order: { name: 'ASC' } });
  }

  /** Protects `name` (again: updates `developers_can_push`). */
  async protect(projectId: number, name: string, developersCanPush: boolean): Promise<void> {
    await this.protectedBranchesRepo
      .createQueryBuilder()
      .insert()
      .into(ProtectedBranch)
      .values({ projectId, name, developersCanPush })
      .orUpdate(['developers_can_push', 'updated_at'], ['project_id', 'name'])
      .execute();
  }

  /** Protects `name` unless it already is (the default branch on the first push). */
  async protectIfAbsent(projectId: number, name: string, developersCanPush: boolean): Promise<void> {
    await this.protectedBranchesRepo
      .createQueryBuilder()
      .insert()
      .into(ProtectedBranch)
      .values({ projectId, name, developersCanPush })
      .orIgnore()
      .execute();
  }

  async unprotect(projectId: number, name: string): Promise<void> {
    await this.protectedBranchesRepo.delete({ projectId, name });
  }

  // ------------------------------------------------------------ releases

  /** A project's releases by tag name (one query). */
  async releases(projectId: number): Promise<Map<string, Release>> {
    const rows = await this.releasesRepo.find({ where: { projectId } });
    return new Map(rows.map((r) => [r.tag, r]));
  }

  release(projectId: number, tag: string): Promise<Release | null> {
    return this.releasesRepo.findOne({ where: { projectId, tag } });
  }

  /** A new release; a unique violation when the tag has one. */
  insertRelease(projectId: number, tag: string, description: string): Promise<Release> {
    return this.releasesRepo.save(this.releasesRepo.create({ projectId, tag, description }));
  }

  /** Creates or replaces the tag's release. */
  async upsertRelease(projectId: number, tag: string, description: string): Promise<void> {
    await this.releasesRepo
      .createQueryBuilder()
      .insert()
      .into(Release)
      .values({ projectId, tag, description })
      .orUpdate(['description', 'updated_at'], ['project_id', 'tag'])
      .execute();
  }

  updateRelease(release: Release, description: string): Promise<Release> {
    release.description = description;
    return this.releasesRepo.save(release);
  }

  async deleteRelease(projectId: number, tag: string): Promise<void> {
    await this.releasesRepo.delete({ projectId, tag });
  }

  // ------------------------------------------------------------ commit comments

  /** A page of a commit's comments, oldest first, with the total. */
  commitComments(projectId: number, sha: string, page: PageRequest): Promise<[CommitComment[], number]> {
    return manyWithTotal(
      this.commentsRepo
        .createQueryBuilder('c')
        .where('c.project_id = :projectId AND c.commit_sha = :sha', { projectId, sha })
        .orderBy('c.created_at', 'ASC')
        .addOrderBy('c.id', 'ASC')
        .offset(page.offset)
        .limit(page.perPage),
    );
  }

  insertCommitComment(values: Omit<CommitComment, 'id' | 'createdAt' | 'updatedAt'>): Promise<CommitComment> {
    return this.commentsRepo.save(this.commentsRepo.create(values));
  }

  // ------------------------------------------------------------ commit statuses

  /** Every status of a commit (for its combined status). */
  statusesOf(projectId: number, sha: string): Promise<CommitStatus[]> {
    return this.statusesRepo.find({ where: { projectId, sha } });
  }

  /** A page of a commit's statuses, newest first: the latest per name and ref unless `all`. */
  listStatuses(projectId: number, sha: string, f: StatusFilter, page: PageRequest): Promise<[CommitStatus[], number]> {
    const qb = this.statusesRepo.createQueryBuilder('s').where('s.project_id = :pid AND s.sha = :sha', { pid: projectId, sha });
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
  openStatus(tx: Tx, projectId: number, sha: string, name: string, ref: string | null): Promise<CommitStatus | null> {
    return tx.getRepository(CommitStatus).findOne({
      // only external statuses (GitLab's GenericCommitStatus): CI builds are commit statuses too
      where: { projectId, sha, name, ref: ref === null ? IsNull() : ref, stage: 'external', status: In(['pending', 'running']) },
      order: { id: 'DESC' },
    });
  }

  newStatus(values: Partial<CommitStatus>): CommitStatus {
    return this.statusesRepo.create(values);
  }

  saveStatus(tx: Tx, row: CommitStatus): Promise<CommitStatus> {
    return tx.getRepository(CommitStatus).save(row);
  }
}
