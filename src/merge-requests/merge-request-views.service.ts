import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { DiffEntry } from '../git/objects';
import { LabelsService } from '../labels/labels.service';
import { MilestonesService } from '../milestones/milestones.service';
import { ProjectViews } from '../projects/project-views.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { User } from '../users/user.entity';
import { UsersRepository } from '../users/users.repository';
import { MergeRequest } from './merge-request.entity';
import { mentionPattern } from './merge-request-policy';
import { MergeRequestsRepository } from './merge-requests.repository';
import { presentMergeRequest, presentMergeRequestChanges } from './merge-requests.presenter';

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
    private readonly users: UsersRepository,
    private readonly labels: LabelsService,
    private readonly milestones: MilestonesService,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  async many(viewer: User | undefined, mrs: MergeRequest[]) {
    const ctx = await this.views.context();
    if (mrs.length === 0) return [];
    const ids = mrs.map((m) => m.id);
    const pattern = viewer ? mentionPattern(viewer.username) : '$^';
    const [labels, milestones, users, stats, explicit] = await Promise.all([
      this.labels.labelsOf('MergeRequest', ids),
      this.milestones.byIds(mrs.map((m) => m.milestoneId).filter((id): id is number => id !== null)),
      this.users.byIds(mrs.flatMap((m) => [m.authorId, m.assigneeId])),
      this.repo.noteStats(ids, viewer?.id ?? 0, pattern),
      this.subscriptions.explicit(viewer?.id, 'MergeRequest', ids),
    ]);
    const mention = new RegExp(pattern, 'i');
    return mrs.map((mr) => {
      const s = stats.get(mr.id);
      const participant =
        !!viewer &&
        (mr.authorId === viewer.id ||
          mr.assigneeId === viewer.id ||
          !!s?.commented ||
          !!s?.mentioned ||
          (!!mr.description && mention.test(mr.description)));
      return presentMergeRequest(
        mr,
        {
          labels: (labels.get(mr.id) ?? []).map((l) => l.title),
          milestone: mr.milestoneId !== null ? milestones.get(mr.milestoneId) ?? null : null,
          assignee: mr.assigneeId !== null ? users.get(mr.assigneeId) ?? null : null,
          author: mr.authorId !== null ? users.get(mr.authorId) ?? null : null,
          subscribed: explicit.get(mr.id) ?? participant,
          userNotesCount: s?.userNotes ?? 0,
          upvotes: s?.upvotes ?? 0,
          downvotes: s?.downvotes ?? 0,
        },
        viewer,
        ctx,
      );
    });
  }

  async one(viewer: User | undefined, mr: MergeRequest) {
    return (await this.many(viewer, [mr]))[0];
  }

  async page(viewer: User | undefined, page: Paginated<MergeRequest>) {
    return new Paginated(await this.many(viewer, page.items), page.total, page.page);
  }

  async withChanges(viewer: User | undefined, v: { mr: MergeRequest; entries: DiffEntry[]; truncated: boolean }) {
    return presentMergeRequestChanges(await this.one(viewer, v.mr), v.entries, v.truncated);
  }

  /** Whether `viewer` is subscribed to `mr` (explicitly, or as a participant). */
  async subscribed(viewer: User, mr: MergeRequest): Promise<boolean> {
    return (await this.many(viewer, [mr]))[0].subscribed;
  }
}
