import { Injectable } from '@nestjs/common';
import { ProjectAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { RepositoryLocks } from '../database/repository-locks';
import { GitService } from '../git/git.service';
import { branchRef, parseRef, Sha, ZERO_SHA } from '../git/names';
import { RefUpdateRejected } from '../git/repository';
import { ProjectResolver } from '../projects/project-resolver.service';
import { PushService } from '../repo-api/push.service';
import { MergeRequest } from './merge-request.entity';
import type { Caller } from '../common/caller/caller';

/** `should_remove_source_branch`: the merged source branch deleted as a push by the merging user. */
@Injectable()
export class SourceBranchRemoval {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly policy: PolicyService,
    private readonly push: PushService,
    private readonly git: GitService,
    private readonly locks: RepositoryLocks,
  ) {}

  /** Deletes the merged source branch, unless it is its project's default or a protected branch, or the user may not push there. */
  async remove(user: Caller, mr: MergeRequest, sha: Sha): Promise<void> {
    const branch = parseRef(mr.sourceBranch);
    if (mr.sourceProjectId === null || branch === null) return;
    try {
      const source = await this.projects.find({ id: mr.sourceProjectId });
      const abilities: Set<ProjectAbility> = await this.policy.projectAbilities(user, source);
      if (source.defaultBranch === mr.sourceBranch) return;
      if (PushService.matches(await this.push.protectedBranches(source.id), mr.sourceBranch)) return;
      if (!(await this.push.canWriteBranch(source.id, mr.sourceBranch, abilities))) return;
      await this.locks.run(source.id, () => this.git.repository(source.id).updateRef(branchRef(branch), ZERO_SHA, sha));
      await this.push.afterPush(source, user, [{ oldSha: sha, newSha: ZERO_SHA, ref: `refs/heads/${mr.sourceBranch}` }], 'api');
    } catch (e) {
      // a push to the source branch after the merge keeps it (the CAS fails): nothing is lost
      if (!(e instanceof RefUpdateRejected)) throw e;
    }
  }
}
