import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { Issue } from './issue.entity';
import { IssueNoteStats, IssuesRepository } from './issues.repository';
import type { Caller } from '../common/caller/caller';

/** Per issue: notes written by people (not the system) and whether the viewer is subscribed. */
export interface IssueParticipation {
  userNotesCount: number;
  subscribed: boolean;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

/** `@username` as a whole mention (GitLab's user reference), for PostgreSQL and JavaScript alike. */
export function mentionPattern(username: string): string {
  return `(^|[^A-Za-z0-9_])@${escapeRegex(username)}($|[^A-Za-z0-9_.-]|[.]($|[^A-Za-z0-9_-]))`;
}

/**
 * Pure: for each issue, its non-system note count and whether `viewer` is subscribed — an explicit
 * choice if there is one, else whether the viewer participates (author, assignee, commenter, or
 * mentioned in the description or a note).
 */
export function participationOf(
  viewer: Caller | undefined,
  issues: Issue[],
  stats: IssueNoteStats[],
  explicit: Map<number, boolean>,
): Map<number, IssueParticipation> {
  const byIssue = new Map(stats.map((s) => [s.id, s]));
  const mention = viewer ? new RegExp(mentionPattern(viewer.username), 'i') : undefined;
  const out = new Map<number, IssueParticipation>();
  for (const i of issues) {
    const s = byIssue.get(i.id);
    const participant =
      !!viewer &&
      (i.authorId === viewer.id || i.assigneeId === viewer.id || !!s?.commented || !!s?.mentioned || (!!i.description && !!mention?.test(i.description)));
    out.set(i.id, { userNotesCount: s?.user_notes ?? 0, subscribed: explicit.get(i.id) ?? participant });
  }
  return out;
}

/** Loads what participationOf needs: two queries whatever the number of issues (none for no issues). */
export async function loadParticipation(
  issuesRepo: IssuesRepository,
  subscriptions: SubscriptionsService,
  viewer: Caller | undefined,
  issues: Issue[],
): Promise<Map<number, IssueParticipation>> {
  if (issues.length === 0) return new Map();
  const ids = issues.map((i) => i.id);
  const [stats, explicit] = await Promise.all([
    issuesRepo.noteStats(ids, viewer?.id ?? 0, viewer ? mentionPattern(viewer.username) : '$^'),
    subscriptions.explicit(viewer?.id, 'Issue', ids),
  ]);
  return participationOf(viewer, issues, stats, explicit);
}
