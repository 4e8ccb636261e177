import { Injectable } from '@nestjs/common';
import { Forbidden, InvalidAttribute, ValidationFailed } from '../common/errors/domain-errors';
import { PageParams, Paginated, pageRequest, paginateAll } from '../common/pagination/pagination';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Transactions } from '../database/transactions';
import { DomainEvents } from '../domain-events/domain-events';
import { parseRef, RefName, Sha } from '../git/names';
import { Commit, DiffEntry } from '../git/objects';
import { ProjectViews } from '../projects/project-views.service';
import { PresentContext } from '../users/users.presenter';
import { UserDirectory } from '../users/user-directory.service';
import { User } from '../users/user.entity';
import { CreateCommitCommentDto, CreateCommitStatusDto, ListCommitsDto, ListCommitStatusesDto } from './dto/commits.dto';
import { RepoContext, RepositoryAccess } from './repository-access.service';
import { CommitStatus } from '../ci/builds/commit-status.entity';
import { CommitStatusesService } from '../ci/builds/commit-statuses.service';
import { CommitComment } from './repo-api.entities';
import { RepositoryRecords } from './repo-api.repository';
import { ProjectRef } from '../common/params/refs';

export interface CommentView {
  comment: CommitComment;
  author?: User;
  /** Who asks: administrators see the author's `email` (spec-decisions 18). */
  viewer?: User;
  present: PresentContext;
}

export interface StatusView {
  status: CommitStatus;
  author?: User;
  viewer?: User;
  present: PresentContext;
}

const STATES = ['pending', 'running', 'success', 'failed', 'canceled'];
const FINISHED = ['success', 'failed', 'canceled'];

/** The combined CI status of a commit's latest statuses (GitLab's pipeline status rules). */
export function combinedStatus(statuses: CommitStatus[]): string | null {
  const latest = new Map<string, CommitStatus>();
  for (const s of statuses) if (!latest.has(s.name) || latest.get(s.name)!.id < s.id) latest.set(s.name, s);
  const all = [...latest.values()];
  if (all.length === 0) return null;
  // 8.17's states (decision 36): a build not yet reached (`created`) still waits, a manual action does not hold the commit
  const st = all
    .filter((s) => s.status !== 'manual' && s.status !== 'skipped')
    .map((s) => (s.status === 'failed' && s.allowFailure ? 'success' : s.status === 'created' ? 'pending' : s.status));
  if (st.length === 0) return 'skipped';
  if (st.every((s) => s === 'success')) return 'success';
  if (st.some((s) => s === 'running') || (st.some((s) => s === 'pending') && st.some((s) => FINISHED.includes(s)))) return 'running';
  if (st.every((s) => s === 'pending')) return 'pending';
  if (st.some((s) => s === 'failed')) return 'failed';
  if (st.some((s) => s === 'canceled')) return 'canceled';
  return 'success';
}

@Injectable()
export class CommitsService {
  constructor(
    private readonly records: RepositoryRecords,
    private readonly users: UserDirectory,
    private readonly tx: Transactions,
    private readonly access: RepositoryAccess,
    private readonly views: ProjectViews,
    private readonly domainEvents: DomainEvents,
    private readonly commitStatuses: CommitStatusesService,
  ) {}

  /** The combined CI status of a commit in a project (null: no statuses). */
  async combinedStatusOf(projectId: number, sha: string): Promise<string | null> {
    return combinedStatus(await this.commitStatuses.ofCommit(projectId, sha));
  }

  /**
   * `GET .../commits`: `ref_name` (default branch), `since`/`until` inclusive (exact instants, any
   * year up to 9999); paginated like every list.
   */
  async list(user: User, ref: ProjectRef, q: ListCommitsDto): Promise<Paginated<Commit>> {
    const ctx = await this.access.open(user, ref);
    const page = pageRequest(q);
    let refName: RefName | null = await this.access.defaultRef(ctx);
    if (q.ref_name) {
      // option-like names, NUL bytes and rev ranges are refused, not read as "no such ref"
      refName = parseRef(q.ref_name);
      if (refName === null) throw new InvalidAttribute('ref_name');
    }
    const tip = await ctx.repo.commit(refName);
    if (!tip) return new Paginated([], 0, page);
    const { commits, total } = await ctx.repo.log(tip.id, { offset: page.offset, limit: page.perPage, since: q.since, until: q.until });
    return new Paginated(commits, total, page);
  }

  async get(user: User, ref: ProjectRef, sha: string): Promise<{ commit: Commit; status: string | null }> {
    const ctx = await this.access.open(user, ref);
    const commit = await this.access.commitOr404(ctx, sha);
    const statuses = await this.commitStatuses.ofCommit(ctx.project.id, commit.id);
    return { commit, status: combinedStatus(statuses) };
  }

  async diff(user: User, ref: ProjectRef, sha: string, q: PageParams): Promise<Paginated<DiffEntry>> {
    const ctx = await this.access.open(user, ref);
    const commit = await this.access.commitOr404(ctx, sha);
    return paginateAll((await ctx.repo.commitDiff(commit)).entries, q, { whole: true });
  }

  // ------------------------------------------------------------- comments

  async comments(user: User, ref: ProjectRef, sha: string, q: PaginationDto): Promise<Paginated<CommentView>> {
    const present = await this.views.context();
    const ctx = await this.access.open(user, ref);
    const commit = await this.access.commitOr404(ctx, sha);
    const page = pageRequest(q);
    const [rows, total] = await this.records.commitComments(ctx.project.id, commit.id, page);
    const authors = await this.users.byIds(rows.map((r) => r.authorId));
    return new Paginated(
      rows.map((c) => ({ comment: c, author: c.authorId ? authors.get(c.authorId) : undefined, viewer: user, present })),
      total,
      page,
    );
  }

  /**
   * `POST .../comments`: a line comment when the full SHA, `path`, `line` and `line_type` name a line of
   * the commit's diff; otherwise a general comment with path, line and line_type null.
   */
  async addComment(user: User, ref: ProjectRef, sha: string, dto: CreateCommitCommentDto): Promise<CommentView> {
    const ctx = await this.access.open(user, ref, 'create_note');
    if (!ctx.abilities.has('download_code')) throw new Forbidden();
    const commit = await this.access.commitOr404(ctx, sha);
    const { path, line, line_type: lineType } = dto;
    let placed: { path: string; line: number; lineType: string } | null = null;
    if (sha === commit.id && path && line !== undefined && (lineType === 'new' || lineType === 'old')) {
      const { entries } = await ctx.repo.commitDiff(commit);
      const entry = entries.find((e) => e.newPath === path || e.oldPath === path);
      if (entry && diffHasLine(entry.diff, line, lineType)) placed = { path, line, lineType };
    }
    const saved = await this.records.insertCommitComment({
      projectId: ctx.project.id,
      commitSha: commit.id,
      authorId: user.id,
      note: dto.note,
      path: placed?.path ?? null,
      line: placed?.line ?? null,
      lineType: placed?.lineType ?? null,
    });
    return { comment: saved, author: user, viewer: user, present: await this.views.context() };
  }

  // ------------------------------------------------------------- statuses

  /** Latest status per name (or all with `all=true`), filtered by `ref`/`ref_name`, `stage`, `name`. */
  async statuses(user: User, ref: ProjectRef, sha: string, q: ListCommitStatusesDto): Promise<Paginated<StatusView>> {
    const present = await this.views.context();
    const ctx = await this.access.open(user, ref, 'read_commit_status');
    const commit = await this.access.commitOr404(ctx, sha);
    const page = pageRequest(q);
    const [rows, total] = await this.commitStatuses.list(
      ctx.project.id,
      commit.id,
      { ref: q.ref ?? q.ref_name, stage: q.stage, name: q.name, all: q.all },
      page,
    );
    const authors = await this.users.byIds(rows.map((r) => r.authorId));
    return new Paginated(
      rows.map((s) => ({ status: s, author: s.authorId ? authors.get(s.authorId) : undefined, viewer: user, present })),
      total,
      page,
    );
  }

  /**
   * `POST /projects/:id/statuses/:sha` (developer+): adds a status, or updates the one with the same
   * name and ref. `ref` defaults to a branch containing the commit.
   */
  async setStatus(user: User, ref: ProjectRef, sha: string, dto: CreateCommitStatusDto): Promise<StatusView> {
    const ctx = await this.access.open(user, ref, 'create_commit_status');
    const state = dto.state;
    if (!STATES.includes(state)) throw new ValidationFailed({ status: ['is not included in the list'] });
    const commit = await this.access.commitOr404(ctx, sha);
    let refName = dto.ref || null;
    if (!refName) {
      const containing = (await ctx.repo.branches()).filter((b) => b.commit.id === commit.id).map((b) => b.name);
      refName = containing[0] ?? (await this.firstBranchContaining(ctx, commit.id));
    }
    const name = (dto.name ?? dto.context ?? 'default').trim() || 'default';
    const targetUrl = dto.target_url ?? null;
    const description = dto.description ?? null;
    if (targetUrl && (targetUrl.length > 2048 || !/^https?:\/\//i.test(targetUrl))) {
      throw new ValidationFailed({ target_url: ['must be a valid http(s) URL'] });
    }
    const now = new Date();
    const saved = await this.tx.run((tx) =>
      this.commitStatuses.setExternal(tx, {
        projectId: ctx.project.id,
        sha: commit.id,
        ref: refName,
        name,
        state,
        authorId: user.id,
        targetUrl,
        description,
        at: now,
      }),
    );
    // the outcome hook: merge-when-build-succeeds (and later CI pipelines) react to the combined status
    await this.domainEvents.emitCommitted('commit_status.changed', {
      projectId: ctx.project.id,
      sha: commit.id,
      status: await this.combinedStatusOf(ctx.project.id, commit.id),
    });
    return { status: saved, author: user, viewer: user, present: await this.views.context() };
  }

  private async firstBranchContaining(ctx: RepoContext, sha: Sha): Promise<string | null> {
    for (const b of await ctx.repo.branches()) if (await ctx.repo.isAncestor(sha, b.commit.id)) return b.name;
    return null;
  }
}

/** Whether a unified diff has `line` on its new (or old) side. */
function diffHasLine(diff: string, line: number, type: 'new' | 'old'): boolean {
  let oldNo = 0;
  let newNo = 0;
  for (const l of diff.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(l);
    if (h) {
      oldNo = Number(h[1]);
      newNo = Number(h[2]);
      continue;
    }
    if (l.startsWith('---') || l.startsWith('+++') || l.startsWith('\\')) continue;
    if (l.startsWith('+')) {
      if (type === 'new' && newNo === line) return true;
      newNo++;
    } else if (l.startsWith('-')) {
      if (type === 'old' && oldNo === line) return true;
      oldNo++;
    } else {
      if ((type === 'new' && newNo === line) || (type === 'old' && oldNo === line)) return true;
      oldNo++;
      newNo++;
    }
  }
  return false;
}
