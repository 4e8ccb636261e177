import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  BadRequest,
  Conflict,
  isUniqueViolation,
  NotFound,
  NotModified,
  ValidationFailed,
  ValidationMap,
} from '../common/errors/domain-errors';
import { Params, parseId } from '../common/params/params';
import { PolicyService } from '../common/policy/policy.service';
import { rejectNul } from '../issues/inputs';
import { issueVisibilityCondition } from '../issues/issue-policy';
import { ProjectsService } from '../projects/projects.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { User } from '../users/user.entity';
import { Label, LabelLink } from './label.entity';
import { LabelDetails } from './labels.presenter';

/** GitLab's label title rule: no `&`, `?` or `,`. */
const TITLE = /^[^&?,]+$/;
/** `#` and 3 or 6 hex digits. */
const COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
/** Colour of labels created implicitly by issue `labels` (GitLab's Label::DEFAULT_COLOR). */
export const DEFAULT_LABEL_COLOR = '#428BCA';
const TAKEN = 'Label already exists';

export type LabelTarget = 'Issue' | 'MergeRequest';

export function validLabelTitle(title: string): boolean {
  return title.length > 0 && title.length <= 255 && TITLE.test(title);
}

/**
 * Project labels: CRUD by name, counts, subscriptions, and the label links of issues (and later
 * merge requests). Titles are unique per project whatever their case.
 */
@Injectable()
export class LabelsService {
  constructor(
    private readonly ds: DataSource,
    private readonly projects: ProjectsService,
    private readonly policy: PolicyService,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  // ---------------------------------------------------------------- routes

  /** Every label of the project (not paginated), title ascending whatever the case, with counts: 3 queries after authorization. */
  async list(user: User, ref: string): Promise<LabelDetails[]> {
    const { project } = await this.projects.authorize(user, ref, 'read_label');
    const labels = await this.ds
      .getRepository(Label)
      .createQueryBuilder('l')
      .where('l.project_id = :projectId', { projectId: project.id })
      .orderBy('lower(l.title) COLLATE "C"', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .getMany();
    return this.details(user, labels);
  }

  async create(user: User, ref: string, p: Params): Promise<LabelDetails> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'admin_label');
    const title = p.requireString('name').trim();
    const color = p.requireString('color').trim();
    const description = p.string('description');
    this.validate({ title, color });
    const repo = this.ds.getRepository(Label);
    let label: Label;
    try {
      label = await this.ds.transaction(async (m) => {
        if (await this.findByTitle(m, project.id, title)) throw new Conflict(TAKEN);
        return m.getRepository(Label).save(
          repo.create({ projectId: project.id, title, color, description: description?.length ? description : null, template: false }),
        );
      });
    } catch (e) {
      if (isUniqueViolation(e, 'labels_project_title_key')) throw new Conflict(TAKEN);
      throw e;
    }
    return (await this.details(user, [label]))[0];
  }

  /** `PUT /labels`: `name` picks the label; `new_name`, `color`, `description` change it. */
  async update(user: User, ref: string, p: Params): Promise<LabelDetails> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'admin_label');
    const name = p.requireString('name').trim();
    const newName = p.string('new_name')?.trim();
    const color = p.string('color')?.trim();
    const description = p.string('description');
    if (newName === undefined && color === undefined && description === undefined) {
      throw new BadRequest('Required parameters "new_name" or "color" missing');
    }
    const label = await this.findByTitle(this.ds.manager, project.id, name);
    if (!label) throw new NotFound('Label');
    this.validate({ title: newName, color });
    const changes: Partial<Label> = {};
    if (newName !== undefined && newName !== label.title) changes.title = newName;
    if (color !== undefined) changes.color = color;
    if (description !== undefined) changes.description = description.length ? description : null;
    if (Object.keys(changes).length) {
      try {
        await this.ds.transaction(async (m) => {
          if (changes.title !== undefined) {
            const other = await this.findByTitle(m, project.id, changes.title);
            if (other && other.id !== label.id) throw new Conflict(TAKEN);
          }
          await m.getRepository(Label).update({ id: label.id }, changes);
        });
      } catch (e) {
        if (isUniqueViolation(e, 'labels_project_title_key')) throw new Conflict(TAKEN);
        throw e;
      }
    }
    const fresh = await this.ds.getRepository(Label).findOneByOrFail({ id: label.id });
    return (await this.details(user, [fresh]))[0];
  }

  /** `DELETE /labels?name=`: unlinks it from every issue, forgets its subscriptions, returns the record. */
  async remove(user: User, ref: string, p: Params): Promise<Label> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'destroy_label');
    const name = p.requireString('name').trim();
    return this.ds.transaction(async (m) => {
      const label = await this.findByTitle(m, project.id, name);
      if (!label) throw new NotFound('Label');
      await this.subscriptions.removeAll(m, 'Label', [label.id]);
      await m.getRepository(Label).delete({ id: label.id }); // label_links go with it (ON DELETE CASCADE)
      return label;
    });
  }

  /** Subscribes (201, 304 when already) or unsubscribes (200, 304 when not subscribed); `labelRef` is an id or a title. */
  async setSubscription(user: User, ref: string, labelRef: string, subscribed: boolean): Promise<LabelDetails> {
    const { project } = await this.projects.authorize(user, ref, 'read_label');
    const label = await this.findByIdOrTitle(project.id, labelRef);
    const current = (await this.subscriptions.explicit(user.id, 'Label', [label.id])).get(label.id) ?? false;
    if (current === subscribed) throw new NotModified();
    await this.subscriptions.set(user.id, 'Label', label.id, subscribed);
    return (await this.details(user, [label]))[0];
  }

  // ---------------------------------------------------------------- for issues (and merge requests)

  /** 400 `{"labels": {"<title>": {"title": ["is invalid"]}}}` for titles GitLab would refuse. */
  assertValidTitles(titles: string[]): void {
    const errors: ValidationMap = {};
    for (const t of titles) if (!validLabelTitle(t)) errors[t] = { title: ['is invalid'] };
    if (Object.keys(errors).length) throw new ValidationFailed({ labels: errors });
  }

  /** The project's labels with these titles (any case), creating the missing ones; in the caller's transaction. */
  async findOrCreate(m: EntityManager, projectId: number, titles: string[]): Promise<Label[]> {
    const unique = new Map<string, string>();
    for (const t of titles) if (!unique.has(t.toLowerCase())) unique.set(t.toLowerCase(), t);
    if (unique.size === 0) return [];
    const wanted = [...unique.values()];
    // concurrent creators of the same title wait on the unique index and then skip it
    await m.query(
      `INSERT INTO labels (project_id, title, color)
       SELECT $1, t, $3 FROM unnest($2::text[]) AS t
       ON CONFLICT (project_id, lower(title)) DO NOTHING`,
      [projectId, wanted, DEFAULT_LABEL_COLOR],
    );
    return m
      .getRepository(Label)
      .createQueryBuilder('l')
      .where('l.project_id = :projectId AND lower(l.title) IN (:...lowers)', { projectId, lowers: [...unique.keys()] })
      .getMany();
  }

  /** The project's labels with these titles (any case), without creating any. */
  async findExisting(m: EntityManager, projectId: number, titles: string[]): Promise<Label[]> {
    const lowers = [...new Set(titles.map((t) => t.toLowerCase()))];
    if (lowers.length === 0) return [];
    return m
      .getRepository(Label)
      .createQueryBuilder('l')
      .where('l.project_id = :projectId AND lower(l.title) IN (:...lowers)', { projectId, lowers })
      .getMany();
  }

  /** Labels of each target, title ascending: one query. */
  async labelsOf(type: LabelTarget, ids: number[], m: EntityManager = this.ds.manager): Promise<Map<number, Label[]>> {
    const out = new Map<number, Label[]>();
    if (ids.length === 0) return out;
    const rows: (Record<string, unknown> & { target_id: number })[] = await m.query(
      `SELECT ll.target_id, l.id, l.project_id, l.title, l.color, l.description, l.template, l.created_at, l.updated_at
         FROM label_links ll JOIN labels l ON l.id = ll.label_id
        WHERE ll.target_type = $1 AND ll.target_id = ANY($2)
        ORDER BY lower(l.title) COLLATE "C" ASC, l.id ASC`,
      [type, [...new Set(ids)]],
    );
    for (const r of rows) {
      const label = Object.assign(new Label(), {
        id: r.id,
        projectId: r.project_id,
        title: r.title,
        color: r.color,
        description: r.description,
        template: r.template,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      });
      const list = out.get(r.target_id) ?? [];
      list.push(label);
      out.set(r.target_id, list);
    }
    return out;
  }

  /** Makes `labelIds` the target's labels; returns what was added and removed. */
  async replaceLinks(
    m: EntityManager,
    type: LabelTarget,
    targetId: number,
    labels: Label[],
  ): Promise<{ added: Label[]; removed: Label[] }> {
    const current = (await this.labelsOf(type, [targetId], m)).get(targetId) ?? [];
    const wanted = new Map(labels.map((l) => [l.id, l]));
    const have = new Map(current.map((l) => [l.id, l]));
    const added = [...wanted.values()].filter((l) => !have.has(l.id));
    const removed = current.filter((l) => !wanted.has(l.id));
    if (removed.length) {
      await m.query(`DELETE FROM label_links WHERE target_type = $1 AND target_id = $2 AND label_id = ANY($3)`, [
        type,
        targetId,
        removed.map((l) => l.id),
      ]);
    }
    if (added.length) {
      await m
        .getRepository(LabelLink)
        .createQueryBuilder()
        .insert()
        .values(added.map((l) => ({ labelId: l.id, targetType: type, targetId })))
        .orIgnore()
        .execute();
    }
    return { added, removed };
  }

  // ---------------------------------------------------------------- helpers

  /** Counts of open and closed issues the viewer may see, and its subscriptions: 2 queries. */
  async details(user: User, labels: Label[]): Promise<LabelDetails[]> {
    if (labels.length === 0) return [];
    const ids = labels.map((l) => l.id);
    const vis = issueVisibilityCondition(user, this.policy);
    const [counts, subscribed] = await Promise.all([
      this.ds
        .createQueryBuilder()
        .select('ll.label_id', 'label_id')
        .addSelect(`count(*) FILTER (WHERE i.state IN ('opened', 'reopened'))::int`, 'open')
        .addSelect(`count(*) FILTER (WHERE i.state = 'closed')::int`, 'closed')
        .from('label_links', 'll')
        .innerJoin('issues', 'i', `i.id = ll.target_id AND ll.target_type = 'Issue'`)
        .innerJoin('projects', 'p', 'p.id = i.project_id')
        .where('ll.label_id IN (:...labelIds)', { labelIds: ids })
        .andWhere('i.deleted_at IS NULL')
        .andWhere(vis.sql, vis.params)
        .groupBy('ll.label_id')
        .getRawMany<{ label_id: number; open: number; closed: number }>(),
      this.subscriptions.explicit(user.id, 'Label', ids),
    ]);
    const byLabel = new Map(counts.map((c) => [Number(c.label_id), c]));
    return labels.map((label) => ({
      label,
      openIssuesCount: Number(byLabel.get(label.id)?.open ?? 0),
      closedIssuesCount: Number(byLabel.get(label.id)?.closed ?? 0),
      openMergeRequestsCount: 0, // there are no merge requests yet
      subscribed: subscribed.get(label.id) ?? false,
    }));
  }

  private validate(v: { title?: string; color?: string }): void {
    const errors: ValidationMap = {};
    if (v.color !== undefined && !COLOR.test(v.color)) errors.color = ['must be a valid color code'];
    if (v.title !== undefined && !validLabelTitle(v.title)) errors.title = ['is invalid'];
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
  }

  private findByTitle(m: EntityManager, projectId: number, title: string): Promise<Label | null> {
    return m
      .getRepository(Label)
      .createQueryBuilder('l')
      .where('l.project_id = :projectId AND lower(l.title) = lower(:title)', { projectId, title })
      .getOne();
  }

  private async findByIdOrTitle(projectId: number, ref: string): Promise<Label> {
    if (ref.includes('\u0000')) throw new NotFound('Label');
    const id = parseId(ref);
    if (id !== undefined) {
      const byId = await this.ds.getRepository(Label).findOne({ where: { id, projectId } });
      if (byId) return byId;
    }
    const byTitle = await this.findByTitle(this.ds.manager, projectId, ref);
    if (!byTitle) throw new NotFound('Label');
    return byTitle;
  }
}
