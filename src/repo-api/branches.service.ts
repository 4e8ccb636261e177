import { Injectable } from '@nestjs/common';
import { Forbidden, NotFound, Rejected } from '../common/errors/domain-errors';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { branchRef, parseNewRefName, parseRef, RefName } from '../git/names';
import { Branch, ZERO_SHA } from '../git/objects';
import { RefUpdateRejected } from '../git/repository';
import { CreateBranchDto, ProtectBranchDto } from './dto/branches.dto';
import { RepositoryLocks } from '../database/repository-locks';
import { branchProtection } from '../git/receive-hooks';
import { PushService } from './push.service';
import { RepoContext, RepositoryAccess } from './repository-access.service';
import { RepositoryRecords } from './repo-api.repository';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export interface BranchView {
  branch: Branch;
  protected: boolean;
  developersCanPush: boolean;
  developersCanMerge: boolean;
}

@Injectable()
export class BranchesService {
  constructor(
    private readonly records: RepositoryRecords,
    private readonly access: RepositoryAccess,
    private readonly push: PushService,
    private readonly locks: RepositoryLocks,
  ) {}

  private async withProtection(ctx: RepoContext, branches: Branch[]): Promise<BranchView[]> {
    const pb = await this.push.protectedBranches(ctx.project.id);
    return branches.map((branch) => ({ branch, ...branchProtection(pb, branch.name) }));
  }

  /** Whole on the first page unless `per_page` says otherwise (GitLab 8 answered it unpaginated). */
  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<BranchView>> {
    const ctx = await this.access.open(user, ref);
    // the refs are paged first and only the page's commits read (20 of 2,000 branches: 20 commits)
    const page = paginateAll(await ctx.repo.branchRefs(), q, { whole: true });
    return new Paginated(await this.withProtection(ctx, await ctx.repo.branchCommits(page.items)), page.total, page.page);
  }

  async get(user: Caller, ref: ProjectRef, name: string): Promise<BranchView> {
    const ctx = await this.access.open(user, ref);
    return this.getIn(ctx, name);
  }

  private async getIn(ctx: RepoContext, name: string): Promise<BranchView> {
    const ref = parseRef(name);
    const branch = ref === null ? null : await ctx.repo.branch(ref);
    if (!branch) throw new NotFound('Branch');
    return (await this.withProtection(ctx, [branch]))[0];
  }

  /** `PUT .../branches/<branch>/protect` or `/unprotect` (the route takes the rest of the path). */
  protection(user: Caller, ref: ProjectRef, path: string, dto: ProtectBranchDto): Promise<BranchView> {
    const m = /^(.+)\/(protect|unprotect)$/.exec(path);
    if (!m) throw new NotFound();
    return this.setProtection(user, ref, m[1], m[2] === 'protect', dto);
  }

  /** Protect (idempotent; `developers_can_push` and `developers_can_merge` optional) or unprotect a branch: master+. */
  async setProtection(user: Caller, ref: ProjectRef, name: string, protect: boolean, dto: ProtectBranchDto): Promise<BranchView> {
    const ctx = await this.access.open(user, ref, 'admin_project');
    const view = await this.getIn(ctx, name);
    if (protect) {
      await this.records.protect(ctx.project.id, view.branch.name, {
        developersCanPush: dto.developers_can_push,
        developersCanMerge: dto.developers_can_merge,
      });
    } else await this.records.unprotect(ctx.project.id, view.branch.name);
    return this.getIn(ctx, view.branch.name);
  }

  /** `POST .../branches`: `branch_name` and `ref` (branch, tag or SHA); 201, or 400 with GitLab's messages. */
  async create(user: Caller, ref: ProjectRef, dto: CreateBranchDto): Promise<BranchView> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const name = parseNewRefName(dto.branch_name);
    if (name === null) throw new Rejected('Branch name is invalid');
    const commit = await this.locks.run(ctx.project.id, async () => {
      if (await ctx.repo.branch(name)) throw new Rejected('Branch already exists');
      const target = parseRef(dto.ref);
      const commit = target === null ? null : await ctx.repo.commit(target);
      if (!commit) throw new Rejected('Invalid reference name');
      if (!(await this.push.canWriteBranch(ctx.project.id, name, ctx.abilities, true))) throw new Forbidden();
      try {
        await ctx.repo.updateRef(branchRef(name), commit.id, ZERO_SHA);
      } catch (e) {
        if (e instanceof RefUpdateRejected) throw new Rejected('Branch already exists');
        throw e;
      }
      return commit;
    });
    await this.push.afterPush(ctx.project, user, [{ oldSha: ZERO_SHA, newSha: commit.id, ref: branchRef(name) }], 'api');
    return this.getIn(ctx, name);
  }

  /** `DELETE .../branches/:branch`: not the default branch, not a protected one. */
  async remove(user: Caller, ref: ProjectRef, raw: string): Promise<RefName> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const name: RefName | null = parseRef(raw);
    const branch = await this.locks.run(ctx.project.id, async () => {
      const branch = name === null ? null : await ctx.repo.branch(name);
      if (!branch) throw new NotFound('Branch');
      const head = await this.access.defaultRef(ctx);
      if (head === branch.name) throw new Rejected('Cannot remove HEAD branch');
      if ((await this.push.protectionOf(ctx.project.id, branch.name)).protected) {
        throw new Rejected('Protected branch cant be removed');
      }
      try {
        await ctx.repo.updateRef(branchRef(branch.name), ZERO_SHA, branch.commit.id);
      } catch (e) {
        if (e instanceof RefUpdateRejected) throw new Rejected('Branch was updated concurrently; try again');
        throw e;
      }
      return branch;
    });
    await this.push.afterPush(ctx.project, user, [{ oldSha: branch.commit.id, newSha: ZERO_SHA, ref: branchRef(branch.name) }], 'api');
    return branch.name;
  }
}
