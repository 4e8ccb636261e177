import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { CommitComment, ProtectedBranch, Release } from './repo-api.entities';
import { manyWithTotal } from '../database/joined-rows';

/**
 * Every query of the repository area: protected branches, releases and commit comments (commit
 * statuses belong to the builds area: CommitStatusesService). Methods that write inside a transaction take the caller's `tx`.
 */
@Injectable()
export class RepositoryRecords {
  constructor(
    @InjectRepository(ProtectedBranch) private readonly protectedBranchesRepo: Repository<ProtectedBranch>,
    @InjectRepository(Release) private readonly releasesRepo: Repository<Release>,
    @InjectRepository(CommitComment) private readonly commentsRepo: Repository<CommitComment>,
  ) {}

  // ------------------------------------------------------------ protected branches

  /** A project's protected branches (names and `*` patterns), by name. */
  protectedBranches(projectId: number): Promise<ProtectedBranch[]> {
    return this.protectedBranchesRepo.find({ where: { projectId }, order: { name: 'ASC' } });
  }

  /**
   * Protects `name`; protecting it again updates the flags given and keeps the others (GitLab 8.17's
   * ApiUpdateService); a new protection takes `false` for a flag not given (ApiCreateService).
   */
  async protect(projectId: number, name: string, flags: { developersCanPush?: boolean; developersCanMerge?: boolean }): Promise<void> {
    await this.protectedBranchesRepo.query(
      `INSERT INTO protected_branches (project_id, name, developers_can_push, developers_can_merge)
       VALUES ($1, $2, COALESCE($3::boolean, false), COALESCE($4::boolean, false))
       ON CONFLICT (project_id, name) DO UPDATE
         SET developers_can_push = COALESCE($3::boolean, protected_branches.developers_can_push),
             developers_can_merge = COALESCE($4::boolean, protected_branches.developers_can_merge),
             updated_at = now()`,
      [projectId, name, flags.developersCanPush ?? null, flags.developersCanMerge ?? null],
    );
  }

  /** Protects `name` unless it already is (the default branch on the first push). */
  async protectIfAbsent(projectId: number, name: string, flags: { developersCanPush: boolean; developersCanMerge: boolean }): Promise<void> {
    await this.protectedBranchesRepo
      .createQueryBuilder()
      .insert()
      .into(ProtectedBranch)
      .values({ projectId, name, ...flags })
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
}
