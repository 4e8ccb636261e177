import { Inject, Injectable } from '@nestjs/common';
import { Forbidden, NotFound } from '../common/errors/domain-errors';
import { ProjectAbility } from '../common/policy/policy';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Transactions } from '../database/transactions';
import { DomainEventCatalogue, OnDomainEvent, PushReceived } from '../domain-events/domain-events';
import { GitService } from '../git/git.service';
import { parseRef, parseSha, Sha, ZERO_SHA } from '../git/names';
import { IssueReference, IssuesService } from '../issues/issues.service';
import { MergeRequestsService } from '../merge-requests/merge-requests.service';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { UserDirectory } from '../users/user-directory.service';
import {
  crossReferenceBody,
  CrossReferenceSource,
  extractMentions,
  isCrossReference,
  Mention,
  mentionedProject,
  parseCrossReference,
  ParsedCrossReference,
  ProjectPath,
} from '../notes/cross-references';
import { Note, NoteableType } from '../notes/note.entity';
import { NoteRecords } from '../notes/note-records.service';
import { SystemNotesService } from '../notes/system-notes.service';
import type { Caller } from '../common/caller/caller';

/** GitLab's GitPushService::PROCESS_COMMIT_LIMIT: the newest commits of a branch update whose messages are read. */
const PUSH_COMMIT_LIMIT = 100;

/** A mentioned issue or merge request the mentioning user may see. */
interface Target {
  type: 'Issue' | 'MergeRequest';
  id: number;
  project: ProjectPath;
  open: boolean;
}

const pathOf = (p: Project): ProjectPath => ({ id: p.id, namespace: p.namespace.path, path: p.path });
const key = (namespace: string, path: string) => `${namespace}/${path}`.toLowerCase();

/**
 * Cross-reference system notes (GitLab 8.17's `Mentionable#create_cross_references!` and
 * `SystemNoteService.cross_reference`): when an issue or merge request (title, description), a
 * comment on one, or a pushed commit (its message) mentions another issue or merge request, the
 * mentioned one gets `mentioned in <source>` — once per source, however often the text is edited,
 * and only for what the mentioning user may see, never on a closed or merged one. Durable reactions
 * to the domain events (retried: a retry writes nothing twice).
 *
 * Who sees such a note (Note#cross_reference_not_visible_for?): only those who may see its source —
 * the issue (confidential ones included), the merge request, the commit's code.
 *
 * Commits are noted as the user who pushed them (GitLab took the commit's author when an account
 * had that address: an address anyone can write into a commit).
 */
@Injectable()
export class CrossReferences {
  private readonly externalUrl: string;

  constructor(
    private readonly issues: IssuesService,
    private readonly mergeRequests: MergeRequestsService,
    private readonly projects: ProjectResolver,
    private readonly users: UserDirectory,
    private readonly notes: NoteRecords,
    private readonly systemNotes: SystemNotesService,
    private readonly git: GitService,
    private readonly tx: Transactions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.externalUrl = config.externalUrl;
  }

  // ---------------------------------------------------------------- reactions

  /** A new or edited issue: its title and description. */
  @OnDomainEvent('issue.changed', { durable: true, queue: 'cross-references.issue' })
  async afterIssue(e: DomainEventCatalogue['issue.changed']): Promise<void> {
    if (e.action !== 'open' && e.action !== 'update') return;
    const [issue, actor] = await Promise.all([this.issues.find(e.issueId), this.users.byId(e.userId)]);
    if (!issue || !actor) return;
    await this.create(actor, { kind: 'Issue', projectId: issue.projectId, id: issue.id, iid: issue.iid }, [issue.title, issue.description]);
  }

  /** A new or edited merge request: its title and description. */
  @OnDomainEvent('merge_request.changed', { durable: true, queue: 'cross-references.merge-request' })
  async afterMergeRequest(e: DomainEventCatalogue['merge_request.changed']): Promise<void> {
    if (e.action !== 'open' && e.action !== 'update') return;
    const actor = await this.users.byId(e.userId);
    const mr = actor && (await this.readable(() => this.mergeRequests.get(actor, { id: e.projectId }, Number(e.attributes.id))));
    if (!actor || !mr) return;
    await this.create(actor, { kind: 'MergeRequest', projectId: mr.projectId, id: mr.id, iid: mr.iid }, [mr.title, mr.description]);
  }

  /** A comment on an issue or merge request: the source is what it comments on (GitLab's Note#local_reference). */
  @OnDomainEvent('note.created', { durable: true, queue: 'cross-references.note' })
  async afterNote(e: DomainEventCatalogue['note.created']): Promise<void> {
    await this.fromNote(e.noteId, e.userId);
  }

  /** An edited comment, as whoever edited it: what it mentions now (those it mentioned before keep theirs, once). */
  @OnDomainEvent('note.updated', { durable: true, queue: 'cross-references.note-updated' })
  async afterNoteEdit(e: DomainEventCatalogue['note.updated']): Promise<void> {
    await this.fromNote(e.noteId, e.userId);
  }

  private async fromNote(noteId: number, actorId: number): Promise<void> {
    const [note, actor] = await Promise.all([this.notes.find(noteId), this.users.byId(actorId)]);
    if (!note || note.system || !actor) return;
    let source: CrossReferenceSource | null = null;
    if (note.noteableType === 'Issue') {
      const issue = await this.issues.find(note.noteableId);
      if (issue) source = { kind: 'Issue', projectId: issue.projectId, id: issue.id, iid: issue.iid };
    } else if (note.noteableType === 'MergeRequest') {
      const mr = await this.readable(() => this.mergeRequests.get(actor, { id: note.projectId }, note.noteableId));
      if (mr) source = { kind: 'MergeRequest', projectId: mr.projectId, id: mr.id, iid: mr.iid };
    }
    if (source) await this.create(actor, source, [note.body]);
  }

  /**
   * Pushed branches (GitLab's GitPushService#process_commit_messages): the commits an update brought
   * (for a new branch those not on the default branch; none for the first push of the default branch),
   * the newest 100 of each, as the pusher.
   */
  @OnDomainEvent('push.received', { durable: true, queue: 'cross-references.push' })
  async afterPush(e: PushReceived): Promise<void> {
    const [project, pusher] = await Promise.all([this.readable(() => this.projects.find({ id: e.projectId })), this.users.byId(e.userId)]);
    if (!project || !pusher || !this.git.exists(project.id)) return;
    const repo = this.git.repository(project.id);
    const done = new Set<string>();
    for (const u of e.updates) {
      if (!u.ref.startsWith('refs/heads/') || u.newSha === ZERO_SHA) continue;
      const branch = u.ref.slice('refs/heads/'.length);
      let from: Sha | null = parseSha(u.oldSha);
      if (!from || from === ZERO_SHA) {
        const defaultBranch = project.defaultBranch && parseRef(project.defaultBranch);
        if (!defaultBranch || project.defaultBranch === branch) continue;
        from = (await repo.branch(defaultBranch))?.commit.id ?? null;
        if (!from) continue;
      }
      const to = parseSha(u.newSha);
      if (!to) continue;
      const { commits } = await repo.commitsBetween(from, to);
      for (const c of commits.slice(-PUSH_COMMIT_LIMIT)) {
        if (done.has(c.id)) continue;
        done.add(c.id);
        await this.create(pusher, { kind: 'Commit', projectId: project.id, sha: c.id }, [c.message]);
      }
    }
  }

  // ---------------------------------------------------------------- writing

  /** The notes `source`'s texts call for, as `actor` (who must see each mentioned issue or merge request). */
  private async create(actor: Caller, source: CrossReferenceSource, texts: (string | null)[]): Promise<void> {
    const mentions = extractMentions(texts.filter((t): t is string => !!t).join('\n'), this.externalUrl);
    if (mentions.length === 0) return;
    const sourceProject = await this.readable(() => this.projects.find({ id: source.projectId }));
    if (!sourceProject) return;
    const from = pathOf(sourceProject);
    for (const t of await this.targets(actor, mentions, from)) {
      if (source.kind === t.type && source.id === t.id) continue; // a text mentioning itself
      if (!t.open) continue; // GitLab: no cross-reference on a closed issue or a closed or merged merge request
      const body = crossReferenceBody(source, from, t.project);
      await this.tx.run(async (tx) => {
        const target = { projectId: t.project.id, type: t.type as NoteableType, id: t.id };
        if (!(await this.systemNotes.addCrossReference(tx, target, actor.id, body, source.kind === 'Commit' ? { commitSha: source.sha } : {}))) return;
        // a note touches its noteable (GitLab's `belongs_to :noteable, touch: true`)
        await (t.type === 'Issue' ? this.issues.touch(tx, t.id) : this.mergeRequests.touch(tx, t.id));
      });
    }
  }

  /** The mentioned issues and merge requests `user` may see, in order of mention. */
  private async targets(user: Caller, mentions: Mention[], from: ProjectPath): Promise<Target[]> {
    const issueRefs: IssueReference[] = [];
    mentions.forEach((m, rank) => {
      if (m.kind !== 'Issue') return;
      const p = mentionedProject(m, from);
      issueRefs.push(key(p.namespace, p.path) === key(from.namespace, from.path) ? { rank, iid: m.iid, projectId: from.id } : { rank, iid: m.iid, ...p });
    });
    const issues = issueRefs.length ? await this.issues.readableReferenced(user, issueRefs) : [];
    const out: Target[] = issues.map((r) => ({ type: 'Issue', id: r.issue.id, project: pathOf(r.project), open: r.issue.state !== 'closed' }));

    const mrMentions = mentions.filter((m) => m.kind === 'MergeRequest').map((m) => ({ ...mentionedProject(m, from), iid: m.iid }));
    const projects = await this.projectsFor(user, mrMentions, from, 'read_merge_request');
    const wanted = mrMentions.flatMap((m) => {
      const p = projects.get(key(m.namespace, m.path));
      return p ? [{ projectId: p.id, iid: m.iid }] : [];
    });
    const byId = new Map([...projects.values()].map((p) => [p.id, p]));
    for (const mr of await this.mergeRequests.byIids(wanted)) {
      out.push({ type: 'MergeRequest', id: mr.id, project: byId.get(mr.projectId)!, open: mr.state !== 'closed' && mr.state !== 'merged' });
    }
    return out;
  }

  // ---------------------------------------------------------------- reading

  /**
   * `items` without the cross-reference notes whose source `viewer` may not see (GitLab's
   * Note#cross_reference_not_visible_for?: a note naming nothing readable is shown to nobody). `on`
   * is the project of the noteable they are on, which their references are relative to. A page with
   * no cross-reference costs nothing; otherwise one statement per kind of source and per project.
   */
  async visible<T>(viewer: Caller, on: Project, items: T[], noteOf: (item: T) => Note): Promise<T[]> {
    const here = pathOf(on);
    const parsed = new Map<T, ParsedCrossReference | undefined>();
    for (const item of items) {
      const n = noteOf(item);
      if (isCrossReference(n)) parsed.set(item, parseCrossReference(n.body, here));
    }
    if (parsed.size === 0) return items;
    const refs = [...parsed.values()].filter((r): r is ParsedCrossReference => !!r);
    const seen = new Set<string>();

    const issueRefs: IssueReference[] = refs.flatMap((r, rank) => {
      if (r.kind !== 'Issue') return [];
      return [
        key(r.namespace, r.path) === key(here.namespace, here.path)
          ? { rank, iid: r.iid, projectId: here.id }
          : { rank, iid: r.iid, namespace: r.namespace, path: r.path },
      ];
    });
    for (const r of issueRefs.length ? await this.issues.readableReferenced(viewer, issueRefs) : []) {
      seen.add(`Issue:${key(r.project.namespace.path, r.project.path)}#${r.issue.iid}`);
    }

    const mrRefs = refs.filter((r): r is Exclude<ParsedCrossReference, { kind: 'Commit' }> => r.kind === 'MergeRequest');
    const withMrs = await this.projectsFor(viewer, mrRefs, here, 'read_merge_request');
    const wanted = mrRefs.flatMap((r) => {
      const p = withMrs.get(key(r.namespace, r.path));
      return p ? [{ projectId: p.id, iid: r.iid }] : [];
    });
    const byId = new Map([...withMrs.values()].map((p) => [p.id, p]));
    for (const mr of await this.mergeRequests.byIids(wanted)) {
      const p = byId.get(mr.projectId)!;
      seen.add(`MergeRequest:${key(p.namespace, p.path)}!${mr.iid}`);
    }

    const withCode = await this.projectsFor(
      viewer,
      refs.filter((r) => r.kind === 'Commit'),
      here,
      'download_code',
    );
    const shown = (r: ParsedCrossReference | undefined): boolean => {
      if (!r) return false;
      const at = key(r.namespace, r.path);
      if (r.kind === 'Commit') return withCode.has(at);
      return seen.has(r.kind === 'Issue' ? `Issue:${at}#${r.iid}` : `MergeRequest:${at}!${r.iid}`);
    };
    return items.filter((item) => !parsed.has(item) || shown(parsed.get(item)));
  }

  // ---------------------------------------------------------------- helpers

  /** The projects among `refs` where `user` has `ability`, by lower-cased `namespace/path` (one read per project). */
  private async projectsFor(
    user: Caller,
    refs: { namespace: string; path: string }[],
    here: ProjectPath,
    ability: ProjectAbility,
  ): Promise<Map<string, ProjectPath>> {
    const out = new Map<string, ProjectPath>();
    const asked = new Set<string>();
    for (const r of refs) {
      const k = key(r.namespace, r.path);
      if (asked.has(k)) continue;
      asked.add(k);
      const ref = k === key(here.namespace, here.path) ? { id: here.id } : { namespace: r.namespace, path: r.path };
      const found = await this.readable(() => this.projects.resolve(user, ref, ability));
      if (found) out.set(k, pathOf(found.project));
    }
    return out;
  }

  /** `fn`'s answer, or null when it is a 404 or 403 (something gone, or not for this user). */
  private async readable<T>(fn: () => Promise<T>): Promise<T | null> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof NotFound || e instanceof Forbidden) return null;
      throw e;
    }
  }
}
