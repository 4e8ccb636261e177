import { Branch, Commit, commitTitle, DiffEntry, Tag, TreeEntry } from '../git/objects';
import { User } from '../users/user.entity';
import { PresentContext, presentAuthor } from '../users/users.presenter';
import type { CommitStatus } from '../ci/builds/commit-status.entity';
import { CommitComment, Release } from './repo-api.entities';
import {
  BranchNameResponse,
  BranchResponse,
  CommitCommentResponse,
  CommitDetailResponse,
  CommitResponse,
  CommitStatusResponse,
  CompareResultResponse,
  ContributorResponse,
  DiffEntryResponse,
  FileCommitResponse,
  GitCommitResponse,
  ReleaseResponse,
  RepositoryFileResponse,
  TagNameResponse,
  TagResponse,
  TreeEntryResponse,
} from './repo-api.responses';
import type { Caller } from '../common/caller/caller';

/** The raw commit shape GitLab embeds in branches and tags. */
export function presentBranchCommit(c: Commit): GitCommitResponse {
  return {
    id: c.id,
    message: c.message,
    parent_ids: c.parentIds,
    authored_date: c.author.date,
    author_name: c.author.name,
    author_email: c.author.email,
    committed_date: c.committer.date,
    committer_name: c.committer.name,
    committer_email: c.committer.email,
  };
}

/** RepoCommit (lists, compare); `parent_ids` everywhere (spec decision 21). */
export function presentCommit(c: Commit): CommitResponse {
  return {
    id: c.id,
    short_id: c.id.slice(0, 8),
    title: commitTitle(c.message),
    author_name: c.author.name,
    author_email: c.author.email,
    created_at: c.committer.date,
    message: c.message,
    parent_ids: c.parentIds,
  };
}

/**
 * A commit as an entry of a list (the repository's commits, a merge request's, a compare's): the
 * spec's Commit "variants add: allow_failure (boolean, in lists)" — a commit itself is never allowed
 * to fail, so `false`. Flat, not a spread (see users.presenter.ts).
 */
export function presentCommitInList(c: Commit): CommitResponse {
  return {
    id: c.id,
    short_id: c.id.slice(0, 8),
    title: commitTitle(c.message),
    author_name: c.author.name,
    author_email: c.author.email,
    created_at: c.committer.date,
    message: c.message,
    parent_ids: c.parentIds,
    allow_failure: false,
  };
}

/** RepoCommitDetail: the commit with its dates and CI status. */
export function presentCommitDetail(c: Commit, status: string | null): CommitDetailResponse {
  return {
    ...presentCommit(c),
    committed_date: c.committer.date,
    authored_date: c.author.date,
    status,
  };
}

/** v3's RepoBranch (8.17: `developers_can_push` and `developers_can_merge` from the matching protection rules). */
export function presentBranch(b: Branch, protection: { protected: boolean; developersCanPush: boolean; developersCanMerge: boolean }): BranchResponse {
  return {
    name: b.name,
    commit: presentBranchCommit(b.commit),
    protected: protection.protected,
    developers_can_push: protection.developersCanPush,
    developers_can_merge: protection.developersCanMerge,
  };
}

export function presentBranchView(v: { branch: Branch; protected: boolean; developersCanPush: boolean; developersCanMerge: boolean }): BranchResponse {
  return presentBranch(v.branch, v);
}

export function presentTagView(v: { tag: Tag; release?: Release }): TagResponse {
  return presentTag(v.tag, v.release);
}

export function presentRelease(r: Release): ReleaseResponse {
  return { tag_name: r.tag, description: r.description };
}

export function presentTag(t: Tag, release: Release | undefined): TagResponse {
  return {
    name: t.name,
    message: t.message,
    commit: presentBranchCommit(t.commit),
    release: release ? { tag_name: release.tag, description: release.description } : null,
  };
}

export function presentTreeEntry(e: TreeEntry): TreeEntryResponse {
  return { id: e.id, name: e.name, type: e.type, mode: e.mode };
}

export function presentCompare(r: {
  commit: Commit | null;
  commits: Commit[];
  diffs: DiffEntry[];
  compareTimeout: boolean;
  compareSameRef: boolean;
}): CompareResultResponse {
  return {
    commit: r.commit ? presentCommit(r.commit) : null,
    commits: r.commits.map(presentCommitInList),
    diffs: r.diffs.map(presentDiff),
    compare_timeout: r.compareTimeout,
    compare_same_ref: r.compareSameRef,
  };
}

/** Contributors: GitLab 8 counts no additions or deletions here. */
export function presentContributor(c: { name: string; email: string; commits: number }): ContributorResponse {
  return { ...c, additions: 0, deletions: 0 };
}

export function presentRepositoryFile(f: {
  fileName: string;
  filePath: string;
  size: number;
  content: Buffer;
  ref: string;
  blobId: string;
  commitId: string;
  lastCommitId: string;
}): RepositoryFileResponse {
  return {
    file_name: f.fileName,
    file_path: f.filePath,
    size: f.size,
    encoding: 'base64',
    content: f.content.toString('base64'),
    ref: f.ref,
    blob_id: f.blobId,
    commit_id: f.commitId,
    last_commit_id: f.lastCommitId,
  };
}

/** A file write's answer: `file_name` (the spec) and `file_path` (GitLab's code) alike (spec decision 13). */
export function presentFileWrite(w: { path: string; branch: string }): FileCommitResponse {
  return { file_name: w.path, file_path: w.path, branch_name: w.branch };
}

export function presentDeletedBranch(name: string): BranchNameResponse {
  return { branch_name: name };
}

export function presentDeletedTag(name: string): TagNameResponse {
  return { tag_name: name };
}

export function presentDiff(d: DiffEntry): DiffEntryResponse {
  return {
    old_path: d.oldPath,
    new_path: d.newPath,
    a_mode: d.aMode,
    b_mode: d.bMode,
    diff: d.diff,
    new_file: d.newFile,
    renamed_file: d.renamedFile,
    deleted_file: d.deletedFile,
    too_large: d.tooLarge,
  };
}

export function presentCommitCommentView(v: { comment: CommitComment; author?: User; viewer?: User; present: PresentContext }): CommitCommentResponse {
  return presentCommitComment(v.comment, v.author, v.viewer, v.present);
}

export function presentCommitStatusView(v: { status: CommitStatus; author?: User; viewer?: User; present: PresentContext }): CommitStatusResponse {
  return presentCommitStatus(v.status, v.author, v.viewer, v.present);
}

export function presentCommitDetailView(v: { commit: Commit; status: string | null }): CommitDetailResponse {
  return presentCommitDetail(v.commit, v.status);
}

export function presentCommitComment(c: CommitComment, author: User | undefined, viewer: Caller | undefined, ctx: PresentContext): CommitCommentResponse {
  return {
    note: c.note,
    path: c.path,
    line: c.line,
    line_type: c.lineType,
    author: presentAuthor(author, viewer, ctx),
    created_at: c.createdAt,
  };
}

export function presentCommitStatus(s: CommitStatus, author: User | undefined, viewer: Caller | undefined, ctx: PresentContext): CommitStatusResponse {
  return {
    id: s.id,
    sha: s.sha,
    ref: s.ref,
    status: s.status,
    name: s.name,
    target_url: s.targetUrl,
    description: s.description,
    created_at: s.createdAt,
    started_at: s.startedAt,
    finished_at: s.finishedAt,
    allow_failure: s.allowFailure,
    author: presentAuthor(author, viewer, ctx),
  };
}
