import { Injectable } from '@nestjs/common';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { BadRequest, Conflict, isUniqueViolation, NotFound, NotModified } from '../common/errors/domain-errors';
import { IdOrName } from '../common/params/params';
import { PolicyUser, ProjectAbility, ProjectAccess } from '../common/policy/policy';
import { readableIssuesInProject } from '../common/policy/visibility';
import { Transactions, Tx } from '../database/transactions';
import { labelChangeNote } from '../notes/system-notes';
import { ProjectResolver } from '../projects/project-resolver.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { CreateLabelDto, DeleteLabelDto, UpdateLabelDto } from './dto/label.dto';
import { Label } from './label.entity';
import { checkLabel, checkLabelTitles, DEFAULT_LABEL_COLOR } from './label-rules';
import { LabelsRepository, LabelTarget } from './labels.repository';
import { LabelDetails } from './labels.presenter';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export type { LabelTarget } from './labels.repository';
export { DEFAULT_LABEL_COLOR, validLabelTitle } from './label-rules';

/** What the counts depend on: the caller's access and abilities, as the resolver returned them. */
type Viewer = { access: ProjectAccess; abilities: Set<ProjectAbility> };

const TAKEN = 'Label already exists';
const UNIQUE_TITLE = 'labels_project_title_key';

/**
 * Project labels: CRUD by name, counts, subscriptions, and the label links of issues (and later
 * merge requests). Titles are unique per project whatever their case.
 */
@Injectable()
export class LabelsService {
  constructor(
    private readonly labels: LabelsRepository,
    private readonly tx: Transactions,
    private readonly projects: ProjectResolver,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  // ---------------------------------------------------------------- routes

  /** Every label of the project (whole on the first page by default), title ascending whatever the case, with counts: 1 statement after resolving the project. */
  /** Whole on the first page unless `per_page` says otherwise (clients search labels on their side). */
  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<LabelDetails>> {
    const viewer = await this.projects.resolve(user, ref, 'read_label');
    const { project } = viewer;
    return paginateAll(await this.details(user, viewer, { projectId: project.id }), q, { whole: true });
  }

  async create(user: Caller, ref: ProjectRef, dto: CreateLabelDto): Promise<LabelDetails> {
    const viewer = await this.projects.resolve(user, ref, 'admin_label');
    const { project } = viewer;
    const { name: title, color, description } = dto;
    checkLabel({ title, color });
    const label = await this.unique(() =>
      this.tx.run(async (tx) => {
        if (await this.labels.findByTitle(project.id, title, tx)) throw new Conflict(TAKEN);
        return this.labels.insert(tx, { projectId: project.id, title, color, description: description?.length ? description : null, template: false });
      }),
    );
    return this.detailsOf(user, viewer, label.id);
  }

  /** `PUT /labels`: `name` picks the label; `new_name`, `color`, `description` change it. */
  async update(user: Caller, ref: ProjectRef, dto: UpdateLabelDto): Promise<LabelDetails> {
    const viewer = await this.projects.resolve(user, ref, 'admin_label');
    const { project } = viewer;
    const { new_name: newName, color, description } = dto;
    if (newName === undefined && color === undefined && description === undefined) {
      throw new BadRequest('Required parameters "new_name" or "color" missing');
    }
    const label = await this.labels.findByTitle(project.id, dto.name);
    if (!label) throw new NotFound('Label');
    checkLabel({ title: newName, color });
    const changes: Partial<Label> = {};
    if (newName !== undefined && newName !== label.title) changes.title = newName;
    if (color !== undefined) changes.color = color;
    if (description !== undefined) changes.description = description.length ? description : null;
    if (Object.keys(changes).length) {
      await this.unique(() =>
        this.tx.run(async (tx) => {
          if (changes.title !== undefined) {
            const other = await this.labels.findByTitle(project.id, changes.title, tx);
            if (other && other.id !== label.id) throw new Conflict(TAKEN);
          }
          await this.labels.update(tx, label.id, changes);
        }),
      );
    }
    return this.detailsOf(user, viewer, label.id);
  }

  /** `DELETE /labels?name=`: unlinks it from every issue, forgets its subscriptions, returns the record. */
  async remove(user: Caller, ref: ProjectRef, dto: DeleteLabelDto): Promise<Label> {
    const { project } = await this.projects.resolve(user, ref, 'destroy_label');
    return this.tx.run(async (tx) => {
      const label = await this.labels.findByTitle(project.id, dto.name, tx);
      if (!label) throw new NotFound('Label');
      await this.subscriptions.removeAll(tx, 'Label', [label.id]);
      await this.labels.delete(tx, label.id);
      return label;
    });
  }

  /** Subscribes (201, 304 when already) or unsubscribes (200, 304 when not subscribed); `labelRef` is an id or a title. */
  async setSubscription(user: Caller, ref: ProjectRef, labelRef: IdOrName, subscribed: boolean): Promise<LabelDetails> {
    const viewer = await this.projects.resolve(user, ref, 'read_label');
    const { project } = viewer;
    const label = await this.findByIdOrTitle(project.id, labelRef);
    const current = (await this.subscriptions.explicit(user.id, 'Label', [label.id])).get(label.id) ?? false;
    if (current === subscribed) throw new NotModified();
    await this.subscriptions.set(user.id, 'Label', label.id, subscribed);
    return this.detailsOf(user, viewer, label.id);
  }

  // ---------------------------------------------------------------- for issues (and merge requests)

  /** 400 `{"labels": {"<title>": {"title": ["is invalid"]}}}` for titles GitLab would refuse. */
  assertValidTitles(titles: string[]): void {
    checkLabelTitles(titles);
  }

  /** The project's labels with these titles (any case), creating the missing ones; in the caller's transaction. */
  async findOrCreate(tx: Tx, projectId: number, titles: string[]): Promise<Label[]> {
    const unique = new Map<string, string>();
    for (const t of titles) if (!unique.has(t.toLowerCase())) unique.set(t.toLowerCase(), t);
    if (unique.size === 0) return [];
    await this.labels.insertMissing(tx, projectId, [...unique.values()], DEFAULT_LABEL_COLOR);
    return this.labels.byLowerTitles(projectId, [...unique.keys()], tx);
  }

  /** The project's labels with these titles (any case), without creating any. */
  findExisting(tx: Tx, projectId: number, titles: string[]): Promise<Label[]> {
    return this.labels.byLowerTitles(projectId, [...new Set(titles.map((t) => t.toLowerCase()))], tx);
  }

  /** Labels of each target, title ascending: one query. */
  labelsOf(type: LabelTarget, ids: number[], tx?: Tx): Promise<Map<number, Label[]>> {
    return this.labels.labelsOf(type, ids, tx);
  }

  /** Makes `labels` the target's labels; returns what was added and removed. */
  async replaceLinks(tx: Tx, type: LabelTarget, targetId: number, labels: Label[]): Promise<{ added: Label[]; removed: Label[] }> {
    const current = (await this.labels.labelsOf(type, [targetId], tx)).get(targetId) ?? [];
    const wanted = new Map(labels.map((l) => [l.id, l]));
    const have = new Map(current.map((l) => [l.id, l]));
    const added = [...wanted.values()].filter((l) => !have.has(l.id));
    const removed = current.filter((l) => !wanted.has(l.id));
    if (removed.length)
      await this.labels.unlink(
        tx,
        type,
        targetId,
        removed.map((l) => l.id),
      );
    if (added.length)
      await this.labels.link(
        tx,
        type,
        targetId,
        added.map((l) => l.id),
      );
    return { added, removed };
  }

  /**
   * Makes the labels titled `titles` (created when missing) the target's labels, in the caller's
   * transaction; returns the system note that records the change, or undefined when none changed.
   */
  async relabel(tx: Tx, projectId: number, type: LabelTarget, targetId: number, titles: string[]): Promise<string | undefined> {
    const { added, removed } = await this.replaceLinks(tx, type, targetId, await this.findOrCreate(tx, projectId, titles));
    return labelChangeNote(added, removed);
  }

  // ---------------------------------------------------------------- helpers

  /**
   * The labels with the counts of the open and closed issues and of the open merge requests the
   * viewer may see (confidential issues decided from the access the resolver returned; none of a
   * kind the viewer may not read, as 8.17's finders) and the viewer's subscriptions: 1 statement.
   */
  private async details(user: PolicyUser | undefined, viewer: Viewer, which: { projectId: number } | { ids: number[] }): Promise<LabelDetails[]> {
    const rows = await this.labels.withDetails(which, {
      issues: viewer.abilities.has('read_issue') ? readableIssuesInProject('i', user, viewer.access) : undefined,
      mergeRequests: viewer.abilities.has('read_merge_request'),
      viewerId: user?.id ?? null,
    });
    return rows.map((r) => ({
      label: r.label,
      openIssuesCount: r.open,
      closedIssuesCount: r.closed,
      openMergeRequestsCount: r.openMergeRequests,
      subscribed: r.subscribed ?? false,
    }));
  }

  /** One label's details (`404 Label Not Found` if it is gone meanwhile). */
  private async detailsOf(user: PolicyUser | undefined, viewer: Viewer, id: number): Promise<LabelDetails> {
    const [found] = await this.details(user, viewer, { ids: [id] });
    if (!found) throw new NotFound('Label');
    return found;
  }

  /** Runs `work`, answering 409 when the per-project unique title index refuses it (a concurrent create). */
  private async unique<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (isUniqueViolation(e, UNIQUE_TITLE)) throw new Conflict(TAKEN);
      throw e;
    }
  }

  private async findByIdOrTitle(projectId: number, ref: IdOrName): Promise<Label> {
    if (ref.name === undefined) throw new NotFound('Label');
    const byId = ref.id === undefined ? null : await this.labels.findInProject(projectId, ref.id);
    if (byId) return byId;
    const byTitle = await this.labels.findByTitle(projectId, ref.name);
    if (!byTitle) throw new NotFound('Label');
    return byTitle;
  }
}
