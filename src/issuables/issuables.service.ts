import { DomainEvents } from '../domain-events/domain-events';
import { Injectable } from '@nestjs/common';
import { checkTitle } from '../common/dto/titles';
import { InvalidAttribute, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { ProjectAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { Transactions, Tx } from '../database/transactions';
import type { ActivityRecord } from '../domain-events/domain-event-catalogue';
import { LabelsService } from '../labels/labels.service';
import { Milestone } from '../milestones/milestone.entity';
import { MilestonesService } from '../milestones/milestones.service';
import { Project } from '../projects/project.entity';
import { User } from '../users/user.entity';
import { UserDirectory } from '../users/user-directory.service';
import { hookAction, Issuable, IssuableChangeRules, IssuableHookAction, issuableChanges, updateEventActions } from './issuable-changes';
import { SystemNotesService } from '../notes/system-notes.service';
import type { Caller } from '../common/caller/caller';

/** An update's inputs, as the DTOs of both kinds carry them. */
export interface IssuableUpdateInput {
  title?: string;
  description?: string;
  state_event?: string;
  labels?: string[];
  assignee_id?: number | null;
  milestone_id?: number | null;
  /** Only for those who may set timestamps (issues); forces a write. */
  updated_at?: Date;
}

/** What differs between issues and merge requests in an update (GitLab's IssuableBaseService subclasses). */
export interface IssuableKind<T extends Issuable> extends IssuableChangeRules<T> {
  /** The noteable and label-link type. */
  type: 'Issue' | 'MergeRequest';
  /** `404 <name> Not Found` when the record went away before its lock. */
  name: 'Issue' | 'Merge Request';
  /** Who may set the assignee, the milestone and the labels (GitLab's filter_params; others' values are dropped). */
  adminAbility: ProjectAbility;
  /** What an assignee must be able to do in the project. */
  readAbility: ProjectAbility;
  records: {
    lock(tx: Tx, id: number): Promise<T | null>;
    update(tx: Tx, id: number, changes: Partial<T>): Promise<void>;
    byId(id: number): Promise<T>;
  };
  /** See updateEventActions. */
  labelsBesideTransition: boolean;
  event(row: T, user: Caller, action: ActivityRecord['action']): ActivityRecord;
  /** In the update's transaction, after its writes: the domain events (project hooks, notifications, reassignment). */
  announce(tx: Tx, current: T, user: Caller, action: IssuableHookAction, reassigned: boolean): Promise<void>;
  /** Checks of the kind's own inputs, after the title and before the labels (merge requests: the target branch). */
  validate?(): Promise<void>;
}

/**
 * What issues and merge requests share (GitLab's IssuableBaseService): the one update algorithm —
 * checked inputs, the locked row's changes with their system notes, labels, events after commit,
 * domain events in the transaction — and the checks of an assignee and a milestone.
 */
@Injectable()
export class IssuablesService {
  constructor(
    private readonly tx: Transactions,
    private readonly policy: PolicyService,
    private readonly users: UserDirectory,
    private readonly labels: LabelsService,
    private readonly milestones: MilestonesService,
    private readonly domainEvents: DomainEvents,
    private readonly systemNotes: SystemNotesService,
  ) {}

  /**
   * Updates `record` of `project` as `user` (whose right to update it the caller checked):
   * `title`, `description`, `state_event` (close, reopen) and the kind's own attributes; `labels`,
   * `assignee_id`, `milestone_id` only with the kind's admin ability. Changes leave system notes;
   * state and label changes record events after the commit. Returns the record as stored.
   */
  async update<T extends Issuable>(
    user: Caller,
    target: { project: Project; abilities: Set<ProjectAbility>; record: T },
    input: IssuableUpdateInput,
    kind: IssuableKind<T>,
  ): Promise<T> {
    const { project, abilities, record } = target;
    const title = checkTitle(input.title);
    if (kind.validate) await kind.validate();
    const labelTitles = input.labels;
    if (labelTitles) this.labels.assertValidTitles(labelTitles);
    const canAdmin = abilities.has(kind.adminAbility);
    const assigneeId = canAdmin ? input.assignee_id : undefined;
    const milestoneId = canAdmin ? input.milestone_id : undefined;
    const assignee = assigneeId ? await this.assignee(project, assigneeId, kind.readAbility) : null;
    const milestone = milestoneId ? await this.milestone(project, milestoneId) : null;
    if (input.description !== undefined && input.description.includes('\0')) throw new InvalidAttribute('description');
    const edit = { title, description: input.description, stateEvent: input.state_event, assigneeId, assignee, milestoneId, milestone };

    const events: ActivityRecord[] = [];
    const updated = await this.tx.run(async (tx) => {
      const current = await kind.records.lock(tx, record.id);
      if (!current) throw new NotFound(kind.name);
      const { changes, notes, transition } = issuableChanges(current, edit, kind);
      let labelsChanged = false;
      if (canAdmin && labelTitles !== undefined) {
        const note = await this.labels.relabel(tx, project.id, kind.type, current.id, labelTitles);
        if (note) {
          labelsChanged = true;
          notes.push(note);
        }
      }
      if (Object.keys(changes).length || labelsChanged || input.updated_at) {
        changes.updatedAt = input.updated_at ?? new Date();
        await kind.records.update(tx, current.id, changes);
      }
      await this.systemNotes.addSystemNotes(tx, { projectId: project.id, type: kind.type, id: current.id }, user.id, notes);
      const after = { ...current, ...changes };
      for (const action of updateEventActions(transition, labelsChanged, kind.labelsBesideTransition)) events.push(kind.event(after, user, action));
      await kind.announce(tx, current, user, hookAction(transition), changes.assigneeId !== undefined);
      return after;
    });
    await this.domainEvents.emitCommitted('activity.recorded', { events: events });
    return kind.records.byId(updated.id);
  }

  /** An assignee must exist and have `ability` in the project (`{"assignee_id": ["is invalid"]}`). */
  async assignee(project: Project, userId: number, ability: ProjectAbility): Promise<User> {
    const user = await this.users.byId(userId);
    if (!user || !(await this.policy.projectAbilities(user, project)).has(ability)) {
      throw new ValidationFailed({ assignee_id: ['is invalid'] });
    }
    return user;
  }

  /** A milestone must belong to the project (`{"milestone_id": ["is invalid"]}`). */
  async milestone(project: Project, milestoneId: number): Promise<Milestone> {
    try {
      return await this.milestones.findInProject(project.id, milestoneId);
    } catch (e) {
      if (e instanceof NotFound) throw new ValidationFailed({ milestone_id: ['is invalid'] });
      throw e;
    }
  }
}
