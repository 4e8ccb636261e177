import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { apiError, Forbidden, NotFound } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';
import { isValidBranchName } from '../git/git.service';
import { Branch, Commit, ZERO_SHA } from '../git/objects';
import { RefUpdateRejected } from '../git/repository';
import { User } from '../users/user.entity';
import { PushService } from './push.service';
import { RepoContext, RepositoryAccess } from './repository-access.service';
import { ProtectedBranch } from './repository.entities';

export interface BranchView {
  branch: Branch;
  protected: boolean;
  developersCanPush: boolean;
}

@Injectable()
export class BranchesService {
  constructor(
    private readonly ds: DataSource,
    private readonly access: RepositoryAccess,
    private readonly push: PushService,
  ) {}

  private async withProtection(ctx: RepoContext, branches: Branch[]): Promise<BranchView[]> {
    const pb = await this.push.protectedBranches(ctx.project.id);
    return branches.map((branch) => {
      const p = PushService.matches(pb, branch.name);
      return { branch, protected: !!p, developersCanPush: p?.developersCanPush ?? false };
    });
  }

  async list(user: User, ref: string): Promise<BranchView[]> {
    const ctx = await this.access.open(user, ref);
    return this.withProtection(ctx, await ctx.repo.branches());
  }

  async get(user: User, ref: string, name: string): Promise<BranchView> {
    const ctx = await this.access.open(user, ref);
    return this.getIn(ctx, name);
  }

  private async getIn(ctx: RepoContext, name: string): Promise<BranchView> {
    const branch = await ctx.repo.branch(name);
    if (!branch) throw new NotFound('Branch');
    return (await this.withProtection(ctx, [branch]))[0];
  }

  /** Protect (idempotent; `developers_can_push` optional) or unprotect a branch: master+. */
  async setProtection(user: User, ref: string, name: string, protect: boolean, p: Params): Promise<BranchView> {
    const ctx = await this.access.open(user, ref, 'admin_project');
    const view = await this.getIn(ctx, name);
    const repo = this.ds.getRepository(ProtectedBranch);
    if (protect) {
      const developersCanPush = p.bool('developers_can_push') ?? false;
      await this.ds
        .createQueryBuilder()
        .insert()
        .into(ProtectedBranch)
        .values({ projectId: ctx.project.id, name, developersCanPush })
        .orUpdate(['developers_can_push', 'updated_at'], ['project_id', 'name'])
        .execute();
    } else {
      await repo.delete({ projectId: ctx.project.id, name });
    }
    return this.getIn(ctx, view.branch.name);
  }

  /** `POST .../branches`: `branch_name` and `ref` (branch, tag or SHA); 201, or 400 with GitLab's messages. */
  async create(user: User, ref: string, p: Params): Promise<BranchView> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const name = p.requireString('branch_name').trim();
    const target = p.requireString('ref').trim();
    if (!isValidBranchName(name)) throw apiError(400, 'Branch name is invalid');
    if (await ctx.repo.branch(name)) throw apiError(400, 'Branch already exists');
    const commit: Commit | null = await ctx.repo.commit(target);
    if (!commit) throw apiError(400, 'Invalid reference name');
    if (!(await this.push.canWriteBranch(ctx.project.id, name, ctx.abilities))) throw new Forbidden();
    try {
      await ctx.repo.updateRef(`refs/heads/${name}`, commit.id, ZERO_SHA);
    } catch (e) {
      if (e instanceof RefUpdateRejected) throw apiError(400, 'Branch already exists');
      throw e;
    }
    await this.push.afterPush(ctx.project, user, [{ oldSha: ZERO_SHA, newSha: commit.id, ref: `refs/heads/${name}` }], 'api');
    return this.getIn(ctx, name);
  }

  /** `DELETE .../branches/:branch`: not the default branch, not a protected one. */
  async remove(user: User, ref: string, name: string): Promise<{ branch_name: string }> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const branch = await ctx.repo.branch(name);
    if (!branch) throw apiError(404, 'No such branch');
    const head = await this.access.defaultRef(ctx);
    if (head === name) throw apiError(405, 'Cannot remove HEAD branch');
    if (PushService.matches(await this.push.protectedBranches(ctx.project.id), name)) {
      throw apiError(405, 'Protected branch cant be removed');
    }
    try {
      await ctx.repo.updateRef(`refs/heads/${name}`, ZERO_SHA, branch.commit.id);
    } catch (e) {
      if (e instanceof RefUpdateRejected) throw apiError(400, 'Branch was updated concurrently; try again');
      throw e;
    }
    await this.push.afterPush(ctx.project, user, [{ oldSha: branch.commit.id, newSha: ZERO_SHA, ref: `refs/heads/${name}` }], 'api');
    return { branch_name: name };
  }
}
