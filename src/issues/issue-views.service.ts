import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { LabelsService } from '../labels/labels.service';
import { MilestonesService } from '../milestones/milestones.service';
import { ProjectViews } from '../projects/project-views.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { UserDirectory } from '../users/user-directory.service';
import { Issue } from './issue.entity';
import { loadParticipation, participationOf } from './issue-participation';
import { IssueDetails, IssuesRepository } from './issues.repository';
import { presentIssue } from './issues.presenter';
import type { Caller } from '../common/caller/caller';

/**
 * Presents issues: labels, milestones, authors and assignees, note counts and the viewer's
 * subscriptions are loaded with one query each, whatever the number of issues.
 */
@Injectable()
export class IssueViews {
  constructor(
    private readonly views: ProjectViews,
    private readonly issues: IssuesRepository,
    private readonly users: UserDirectory,
    private readonly labels: LabelsService,
    private readonly milestones: MilestonesService,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  async many(viewer: Caller | undefined, issues: Issue[]) {
    const ctx = await this.views.context();
    if (issues.length === 0) return [];
    const ids = issues.map((i) => i.id);
    const [labels, milestones, users, participation] = await Promise.all([
      this.labels.labelsOf('Issue', ids),
      this.milestones.byIds(issues.map((i) => i.milestoneId).filter((id): id is number => id !== null)),
      this.users.byIds(issues.flatMap((i) => [i.authorId, i.assigneeId])),
      loadParticipation(this.issues, this.subscriptions, viewer, issues),
    ]);
    return issues.map((i) =>
      presentIssue(
        i,
        {
          labels: (labels.get(i.id) ?? []).map((l) => l.title),
          milestone: i.milestoneId !== null ? (milestones.get(i.milestoneId) ?? null) : null,
          assignee: i.assigneeId !== null ? (users.get(i.assigneeId) ?? null) : null,
          author: i.authorId !== null ? (users.get(i.authorId) ?? null) : null,
          subscribed: participation.get(i.id)?.subscribed ?? false,
          userNotesCount: participation.get(i.id)?.userNotesCount ?? 0,
        },
        viewer,
        ctx,
      ),
    );
  }

  async one(viewer: Caller | undefined, issue: Issue) {
    return (await this.many(viewer, [issue]))[0];
  }

  async page(viewer: Caller | undefined, page: Paginated<Issue>) {
    return new Paginated(await this.many(viewer, page.items), page.total, page.page);
  }

  /**
   * A page read with IssuesRepository.listDetailed: only the labels are left to load (one query),
   * unless every item comes with its label titles (IssuesService.readableReferenced).
   */
  async detailedPage(viewer: Caller | undefined, page: Paginated<IssueDetails & { labels?: string[] }>) {
    const ctx = await this.views.context();
    const issues = page.items.map((d) => d.issue);
    const labels = page.items.every((d) => d.labels)
      ? new Map(page.items.map((d) => [d.issue.id, d.labels!.map((title) => ({ title }))]))
      : await this.labels.labelsOf(
          'Issue',
          issues.map((i) => i.id),
        );
    const explicit = new Map(page.items.filter((d) => d.explicit !== null).map((d) => [d.issue.id, d.explicit as boolean]));
    const participation = participationOf(
      viewer,
      issues,
      page.items.map((d) => d.stats),
      explicit,
    );
    const items = page.items.map((d) =>
      presentIssue(
        d.issue,
        {
          labels: (labels.get(d.issue.id) ?? []).map((l: { title: string }) => l.title),
          milestone: d.milestone,
          assignee: d.assignee,
          author: d.author,
          subscribed: participation.get(d.issue.id)?.subscribed ?? false,
          userNotesCount: participation.get(d.issue.id)?.userNotesCount ?? 0,
        },
        viewer,
        ctx,
      ),
    );
    return new Paginated(items, page.total, page.page);
  }
}
