import { Injectable } from '@nestjs/common';
import { GitService } from '../git/git.service';
import { branchRef, mergeRequestHeadRef, parseRef, parseSha, Sha, ZERO_SHA } from '../git/names';
import { Commit, DiffEntry } from '../git/objects';
import { Repository } from '../git/repository';
import { MergeRequest } from './merge-request.entity';

/** The tips a merge request compares, as seen in the target repository. */
export interface MergeRequestHeads {
  repo: Repository;
  /** Tip of the source branch (null: the branch is gone). */
  source: Sha | null;
  /** Tip of the target branch (null: the branch is gone). */
  target: Sha | null;
}

/**
 * Git for merge requests, all in the target project's repository: a fork's source branch is first
 * fetched into `refs/merge-requests/<iid>/head` there (objects copied, no shared store assumed).
 */
@Injectable()
export class MergeRequestGit {
  constructor(private readonly git: GitService) {}

  async heads(mr: MergeRequest): Promise<MergeRequestHeads> {
    const repo = this.git.repository(mr.projectId);
    const [target, source] = await Promise.all([this.tip(repo, mr.targetBranch), this.sourceTip(mr, repo)]);
    return { repo, source, target };
  }

  /** A branch's commit through the repository's long-lived cat-file reader (no process per read). */
  private async tip(repo: Repository, branch: string): Promise<Sha | null> {
    const name = parseRef(branch);
    return name === null ? null : ((await repo.commit(branchRef(name)))?.id ?? null);
  }

  private async sourceTip(mr: MergeRequest, repo: Repository): Promise<Sha | null> {
    if (mr.sourceProjectId === mr.projectId) return this.tip(repo, mr.sourceBranch);
    const branch = parseRef(mr.sourceBranch);
    if (branch === null) return null;
    const local = mergeRequestHeadRef(mr.iid);
    // a deleted fork leaves no source
    const sourceId = mr.sourceProjectId;
    if (sourceId === null || !this.git.exists(sourceId)) return null;
    const fetched = await repo.fetchBranchFrom(this.git.repositoryPath(sourceId), branch, local);
    if (fetched) return fetched;
    // the branch is gone from the fork (or a concurrent fetch holds the ref): nothing to merge
    const stillThere = await this.git.repository(sourceId).refSha(branchRef(branch));
    return stillThere ? repo.refSha(local) : null;
  }

  /**
   * Writes `refs/merge-requests/<iid>/head` in the target repository at the source branch's tip (from a
   * fork: its commits fetched there, `heads`) and keeps that tip and its merge base with the target
   * around (8.17's MergeRequest#fetch_ref and MergeRequestDiff#keep_around_commits), so reviewers and CI
   * can `git fetch origin refs/merge-requests/<iid>/head` and a force push never loses a reviewed commit.
   * A source branch that is gone leaves the ref where it was. Done when a merge request is created and
   * whenever its source branch moves.
   */
  async writeHeadRef(mr: MergeRequest): Promise<void> {
    const h = await this.heads(mr);
    if (!h.source) return;
    if (mr.sourceProjectId === mr.projectId) await h.repo.setRef(mergeRequestHeadRef(mr.iid), h.source);
    const base = h.target ? await h.repo.mergeBase(h.target, h.source) : null;
    await h.repo.keepAround(base ? [h.source, base] : [h.source]);
  }

  /** The range a merge request shows: before a merge its branches, after it the merge commit's parents. */
  private async range(mr: MergeRequest): Promise<{ repo: Repository; base: Sha | null; head: Sha | null }> {
    const repo = this.git.repository(mr.projectId);
    const mergeSha = mr.state === 'merged' ? parseSha(mr.mergeCommitSha) : null;
    if (mergeSha) {
      const merge = await repo.commit(mergeSha);
      if (merge && merge.parentIds.length === 2) return { repo, base: merge.parentIds[0], head: merge.parentIds[1] };
    }
    const h = await this.heads(mr);
    return { repo, base: h.target, head: h.source };
  }

  /** The source commits not on the target, newest first (GitLab's order), at most the compare cap. */
  async commits(mr: MergeRequest): Promise<Commit[]> {
    const { repo, base, head } = await this.range(mr);
    if (!head) return [];
    const { commits } = await repo.commitsBetween(base ?? ZERO_SHA, head);
    return commits.reverse();
  }

  /** The diff from the merge base to the source tip, with compare's caps (too_large, at most 1,000 files). */
  async changes(mr: MergeRequest): Promise<{ entries: DiffEntry[]; truncated: boolean }> {
    const { repo, base, head } = await this.range(mr);
    if (!head || !base) return { entries: [], truncated: false };
    const from = (await repo.mergeBase(base, head)) ?? base;
    if (from === head) return { entries: [], truncated: false };
    return repo.diff(from, head);
  }

  branchExists(projectId: number, name: string): Promise<boolean> {
    return this.git.branchExists(projectId, name);
  }

  /** Whether the source merges cleanly into the target now (null: a branch is missing). */
  async mergeable(mr: MergeRequest): Promise<boolean> {
    const h = await this.heads(mr);
    if (!h.source || !h.target) return false;
    return (await h.repo.mergeTree(h.target, h.source)) !== null;
  }
}
