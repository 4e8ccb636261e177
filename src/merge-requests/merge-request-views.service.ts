import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { DiffEntry } from '../git/objects';
import { LabelsService } from '../labels/labels.service';
import { MilestonesService } from '../milestones/milestones.service';
import { ProjectViews } from '../projects/project-views.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { UserDirectory } from '../users/user-directory.service';
import { MergeRequest } from './merge-request.entity';
import { mentionPattern } from './merge-request-policy';
import { MergeRequestDetails, MergeRequestsRepository } from './merge-requests.repository';
import { presentMergeRequest, presentMergeRequestChanges } from './merge-requests.presenter';
import type { Caller } from '../common/caller/caller';

/**
 * Presents merge requests: labels, milestones, authors and assignees, note statistics (counts,
 * votes, participation) and the viewer's subscriptions load with one query each, whatever the
 * number of merge requests.
 */
@Injectable()
export class MergeRequestViews {
  constructor(
    private readonly views: ProjectViews,
    private readonly repo: MergeRequestsRepository,
    private readonly users: UserDirectory,
    private readonly labels: LabelsService,
    private readonly milestones: MilestonesService,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  async many(viewer: Caller | undefined, mrs: MergeRequest[]) {
    if (mrs.length === 0) return [];
    const ids = mrs.map((m) => m.id);
    const pattern = viewer ? mentionPattern(viewer.username) : '$^';
    const [milestones, users, stats, explicit] = await Promise.all([
      this.milestones.byIds(mrs.map((m) => m.milestoneId).filter((id): id is number => id !== null)),
      this.users.byIds(mrs.flatMap((m) => [m.authorId, m.assigneeId])),
      this.repo.noteStats(ids, viewer?.id ?? 0, pattern),
      this.subscriptions.explicit(viewer?.id, 'MergeRequest', ids),
    ]);
    const details = mrs.map((mr): MergeRequestDetails => ({
      mr,
      milestone: mr.milestoneId !== null ? (milestones.get(mr.milestoneId) ?? null) : null,
      assignee: mr.assigneeId !== null ? (users.get(mr.assigneeId) ?? null) : null,
      author: mr.authorId !== null ? (users.get(mr.authorId) ?? null) : null,
      stats: stats.get(mr.id) ?? { userNotes: 0, upvotes: 0, downvotes: 0, commented: false, mentioned: false },
      explicit: explicit.get(mr.id) ?? null,
    }));
    return this.present(viewer, details);
  }

  /** Presents merge requests whose extras are loaded: their labels come in one query. */
  private async present(viewer: Caller | undefined, details: MergeRequestDetails[]) {
    const ctx = await this.views.context();
    if (details.length === 0) return [];
    const labels = await this.labels.labelsOf(
      'MergeRequest',
      details.map((d) => d.mr.id),
    );
    const pattern = viewer ? mentionPattern(viewer.username) : '$^';
    const mention = new RegExp(pattern, 'i');
    return details.map(({ mr, stats: s, explicit, milestone, assignee, author }) => {
      const participant =
        !!viewer &&
        (mr.authorId === viewer.id || mr.assigneeId === viewer.id || !!s?.commented || !!s?.mentioned || (!!mr.description && mention.test(mr.description)));
      return presentMergeRequest(
        mr,
        {
          labels: (labels.get(mr.id) ?? []).map((l) => l.title),
          milestone,
          assignee,
          author,
          subscribed: explicit ?? participant,
          userNotesCount: s.userNotes,
          upvotes: s.upvotes,
          downvotes: s.downvotes,
        },
        viewer,
        ctx,
      );
    });
  }

  async one(viewer: Caller | undefined, mr: MergeRequest) {
    return (await this.many(viewer, [mr]))[0];
  }

  /** A page read with MergeRequestsRepository.listDetailed: only the labels are left to load. */
  async page(viewer: Caller | undefined, page: Paginated<MergeRequestDetails>) {
    return new Paginated(await this.present(viewer, page.items), page.total, page.page);
  }

  async withChanges(viewer: Caller | undefined, v: { mr: MergeRequest; entries: DiffEntry[]; truncated: boolean }) {
    return presentMergeRequestChanges(await this.one(viewer, v.mr), v.entries, v.truncated);
  }

  /** Whether `viewer` is subscribed to `mr` (explicitly, or as a participant). */
  async subscribed(viewer: Caller, mr: MergeRequest): Promise<boolean> {
    return (await this.many(viewer, [mr]))[0].subscribed;
  }
}
