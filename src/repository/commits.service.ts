import { Injectable } from '@nestjs/common';
import { DataSource, In, IsNull } from 'typeorm';
import { apiError, Forbidden, InvalidAttribute, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Params } from '../common/params/params';
import { DomainEvents } from '../events/domain-events';
import { Commit, DiffEntry } from '../git/objects';
import { isSafeRef } from '../git/repository';
import { User } from '../users/user.entity';
import { RepositoryAccess } from './repository-access.service';
import { CommitComment, CommitStatus } from './repository.entities';

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const STATES = ['pending', 'running', 'success', 'failed', 'canceled'];
const FINISHED = ['success', 'failed', 'canceled'];

function timestamp(p: Params, name: string): Date | undefined {
  const v = p.string(name)?.trim();
  if (v === undefined || v === '') return undefined;
  const d = new Date(v);
  if (!ISO.test(v) || Number.isNaN(d.getTime())) {
    throw apiError(400, `"${name}" must be a timestamp in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ`);
  }
  return d;
}

/** The combined CI status of a commit's latest statuses (GitLab's pipeline status rules). */
export function combinedStatus(statuses: CommitStatus[]): string | null {
  const latest = new Map<string, CommitStatus>();
  for (const s of statuses) if (!latest.has(s.name) || latest.get(s.name)!.id < s.id) latest.set(s.name, s);
  const all = [...latest.values()];
  if (all.length === 0) return null;
  const st = all.map((s) => (s.status === 'failed' && s.allowFailure ? 'success' : s.status));
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
    private readonly ds: DataSource,
    private readonly access: RepositoryAccess,
    private readonly domainEvents: DomainEvents,
  ) {}

  /** The combined CI status of a commit in a project (null: no statuses). */
  async combinedStatusOf(projectId: number, sha: string): Promise<string | null> {
    return combinedStatus(await this.ds.getRepository(CommitStatus).find({ where: { projectId, sha } }));
  }

  /** `GET .../commits`: `ref_name` (default branch), `since`/`until` inclusive; paginated like every list. */
  async list(user: User, ref: string, p: Params): Promise<Paginated<Commit>> {
    const ctx = await this.access.open(user, ref);
    const page = pageRequest(p);
    const since = timestamp(p, 'since');
    const until = timestamp(p, 'until');
    const refName = p.string('ref_name')?.trim() || (await this.access.defaultRef(ctx));
    // option-like names, NUL bytes and rev ranges are refused, not read as "no such ref"
    if (!isSafeRef(refName)) throw new InvalidAttribute('ref_name');
    const tip = await ctx.repo.commit(refName);
    if (!tip) return new Paginated([], 0, page);
    const { commits, total } = await ctx.repo.log(tip.id, { offset: page.offset, limit: page.perPage, since, until });
    return new Paginated(commits, total, page);
  }

  async get(user: User, ref: string, sha: string): Promise<{ commit: Commit; status: string | null }> {
    const ctx = await this.access.open(user, ref);
    const commit = await this.access.commitOr404(ctx, sha);
    const statuses = await this.ds.getRepository(CommitStatus).find({ where: { projectId: ctx.project.id, sha: commit.id } });
    return { commit, status: combinedStatus(statuses) };
  }

  async diff(user: User, ref: string, sha: string): Promise<DiffEntry[]> {
    const ctx = await this.access.open(user, ref);
    const commit = await this.access.commitOr404(ctx, sha);
    return (await ctx.repo.commitDiff(commit)).entries;
  }

  // ------------------------------------------------------------- comments

  async comments(user: User, ref: string, sha: string, p: Params) {
    const ctx = await this.access.open(user, ref);
    const commit = await this.access.commitOr404(ctx, sha);
    const page = pageRequest(p);
    const [rows, total] = await this.ds.getRepository(CommitComment).findAndCount({
      where: { projectId: ctx.project.id, commitSha: commit.id },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.perPage,
    });
    const authors = await this.users(rows.map((r) => r.authorId));
    return new Paginated(rows.map((c) => ({ comment: c, author: c.authorId ? authors.get(c.authorId) : undefined })), total, page);
  }

  /**
   * `POST .../comments`: a line comment when the full SHA, `path`, `line` and `line_type` name a line of
   * the commit's diff; otherwise a general comment with path, line and line_type null.
   */
  async addComment(user: User, ref: string, sha: string, p: Params) {
    const ctx = await this.access.open(user, ref, 'create_note');
    if (!ctx.abilities.has('download_code')) throw new Forbidden();
    const note = p.requireString('note');
    const commit = await this.access.commitOr404(ctx, sha);
    const path = p.string('path');
    const line = p.int('line');
    const lineType = p.string('line_type');
    let placed: { path: string; line: number; lineType: string } | null = null;
    if (sha === commit.id && path && line !== undefined && (lineType === 'new' || lineType === 'old')) {
      const { entries } = await ctx.repo.commitDiff(commit);
      const entry = entries.find((e) => e.newPath === path || e.oldPath === path);
      if (entry && diffHasLine(entry.diff, line, lineType)) placed = { path, line, lineType };
    }
    const repo = this.ds.getRepository(CommitComment);
    const saved = await repo.save(
      repo.create({
        projectId: ctx.project.id,
        commitSha: commit.id,
        authorId: user.id,
        note,
        path: placed?.path ?? null,
        line: placed?.line ?? null,
        lineType: placed?.lineType ?? null,
      }),
    );
    return { comment: saved, author: user };
  }

  // ------------------------------------------------------------- statuses

  /** Latest status per name (or all with `all=true`), filtered by `ref`/`ref_name`, `stage`, `name`. */
  async statuses(user: User, ref: string, sha: string, p: Params) {
    const ctx = await this.access.open(user, ref, 'read_commit_status');
    const commit = await this.access.commitOr404(ctx, sha);
    const page = pageRequest(p);
    const qb = this.ds
      .getRepository(CommitStatus)
      .createQueryBuilder('s')
      .where('s.project_id = :pid AND s.sha = :sha', { pid: ctx.project.id, sha: commit.id });
    const refName = p.string('ref') ?? p.string('ref_name');
    if (refName) qb.andWhere('s.ref = :ref', { ref: refName });
    const stage = p.string('stage');
    if (stage) qb.andWhere('s.stage = :stage', { stage });
    const name = p.string('name');
    if (name) qb.andWhere('s.name = :name', { name });
    if (!p.bool('all')) {
      qb.andWhere(
        `s.id IN (SELECT max(id) FROM commit_statuses WHERE project_id = :pid AND sha = :sha GROUP BY name, coalesce(ref, ''))`,
      );
    }
    qb.orderBy('s.id', 'DESC').offset(page.offset).limit(page.perPage);
    const [rows, total] = await qb.getManyAndCount();
    const authors = await this.users(rows.map((r) => r.authorId));
    return new Paginated(rows.map((s) => ({ status: s, author: s.authorId ? authors.get(s.authorId) : undefined })), total, page);
  }

  /**
   * `POST /projects/:id/statuses/:sha` (developer+): adds a status, or updates the one with the same
   * name and ref. `ref` defaults to a branch containing the commit.
   */
  async setStatus(user: User, ref: string, sha: string, p: Params) {
    const ctx = await this.access.open(user, ref, 'create_commit_status');
    const state = p.requireString('state').trim();
    if (!STATES.includes(state)) throw new ValidationFailed({ status: ['is not included in the list'] });
    if (!isSafeRef(sha)) throw new NotFound('Commit');
    const commit = await this.access.commitOr404(ctx, sha);
    let refName = p.string('ref')?.trim() || null;
    if (!refName) {
      const containing = (await ctx.repo.branches()).filter((b) => b.commit.id === commit.id).map((b) => b.name);
      refName = containing[0] ?? (await this.firstBranchContaining(ctx, commit.id));
    }
    const name = (p.string('name') ?? p.string('context') ?? 'default').trim() || 'default';
    const targetUrl = p.string('target_url') ?? null;
    const description = p.string('description') ?? null;
    if (targetUrl && (targetUrl.length > 2048 || !/^https?:\/\//i.test(targetUrl))) {
      throw new ValidationFailed({ target_url: ['must be a valid http(s) URL'] });
    }
    const now = new Date();
    const saved = await this.ds.transaction(async (m) => {
      const repo = m.getRepository(CommitStatus);
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('status:' || $1 || ':' || $2 || ':' || $3))`, [ctx.project.id, commit.id, name]);
      const existing = await repo.findOne({
        where: {
          projectId: ctx.project.id,
          sha: commit.id,
          name,
          ref: refName === null ? IsNull() : refName,
          status: In(['pending', 'running']),
        },
        order: { id: 'DESC' },
      });
      const row = existing ?? repo.create({ projectId: ctx.project.id, sha: commit.id, ref: refName, name, stage: 'external', allowFailure: false, startedAt: null, finishedAt: null });
      row.status = state;
      row.authorId = user.id;
      if (targetUrl !== null) row.targetUrl = targetUrl;
      else if (!existing) row.targetUrl = null;
      if (description !== null) row.description = description;
      else if (!existing) row.description = null;
      if (state === 'running' && !row.startedAt) row.startedAt = now;
      if (FINISHED.includes(state)) row.finishedAt = now;
      if (state === 'pending' || state === 'running') row.finishedAt = null;
      return repo.save(row);
    });
    this.domainEvents.commitStatusChanged({
      projectId: ctx.project.id,
      sha: commit.id,
      status: await this.combinedStatusOf(ctx.project.id, commit.id),
    });
    return { status: saved, author: user };
  }

  private async firstBranchContaining(ctx: Awaited<ReturnType<RepositoryAccess['open']>>, sha: string): Promise<string | null> {
    for (const b of await ctx.repo.branches()) if (await ctx.repo.isAncestor(sha, b.commit.id)) return b.name;
    return null;
  }

  private async users(ids: (number | null)[]): Promise<Map<number, User>> {
    const unique = [...new Set(ids.filter((i): i is number => i !== null))];
    if (!unique.length) return new Map();
    const users = await this.ds.getRepository(User).findBy({ id: In(unique) });
    return new Map(users.map((u) => [u.id, u]));
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
