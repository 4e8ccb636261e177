import { Branch, Commit, commitTitle, DiffEntry, Tag, TreeEntry } from '../git/objects';
import { User } from '../users/user.entity';
import { PresentContext, presentUserBasic } from '../users/users.presenter';
import { CommitComment, CommitStatus, Release } from './repository.entities';

/** The raw commit shape GitLab embeds in branches and tags. */
export function presentBranchCommit(c: Commit) {
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
export function presentCommit(c: Commit) {
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

/** RepoCommitDetail: the commit with its dates and CI status. */
export function presentCommitDetail(c: Commit, status: string | null) {
  return {
    ...presentCommit(c),
    committed_date: c.committer.date,
    authored_date: c.author.date,
    status,
  };
}

export function presentBranch(b: Branch, protection: { protected: boolean; developersCanPush: boolean }) {
  return {
    name: b.name,
    commit: presentBranchCommit(b.commit),
    protected: protection.protected,
    developers_can_push: protection.developersCanPush,
  };
}

export function presentTag(t: Tag, release: Release | undefined) {
  return {
    name: t.name,
    message: t.message,
    commit: presentBranchCommit(t.commit),
    release: release ? { tag_name: release.tag, description: release.description } : null,
  };
}

export function presentTreeEntry(e: TreeEntry) {
  return { id: e.id, name: e.name, type: e.type, mode: e.mode };
}

export function presentDiff(d: DiffEntry) {
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

export function presentCommitComment(c: CommitComment, author: User | undefined, ctx: PresentContext) {
  return {
    note: c.note,
    path: c.path,
    line: c.line,
    line_type: c.lineType,
    author: author ? presentUserBasic(author, ctx) : null,
    created_at: c.createdAt,
  };
}

export function presentCommitStatus(s: CommitStatus, author: User | undefined, ctx: PresentContext) {
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
    author: author ? presentUserBasic(author, ctx) : null,
  };
}
