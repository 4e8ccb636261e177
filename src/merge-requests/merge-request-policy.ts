import { PolicyUser, ProjectAbility } from '../common/policy/policy';
import { MergeRequest } from './merge-request.entity';

/**
 * GitLab's per-merge-request rules on top of the project abilities (ability.rb): the author and the
 * assignee may update their merge request. Merging is decided by push rights on the target branch
 * (branch protection included), which the merge service asks the repository area for.
 */
export function involvedIn(user: PolicyUser | undefined, mr: Pick<MergeRequest, 'authorId' | 'assigneeId'>): boolean {
  return !!user && (mr.authorId === user.id || mr.assigneeId === user.id);
}

export function canUpdateMergeRequest(user: PolicyUser | undefined, abilities: Set<ProjectAbility>, mr: MergeRequest): boolean {
  return abilities.has('update_merge_request') || (abilities.has('read_merge_request') && involvedIn(user, mr));
}

/** Assignee, milestone and labels are set only by those who administer merge requests (filter_params). */
export function canAdminMergeRequest(abilities: Set<ProjectAbility>): boolean {
  return abilities.has('admin_merge_request');
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

/** `@username` as a whole mention, for PostgreSQL and JavaScript alike. */
export function mentionPattern(username: string): string {
  return `(^|[^A-Za-z0-9_])@${escapeRegex(username)}($|[^A-Za-z0-9_.-]|[.]($|[^A-Za-z0-9_-]))`;
}
