import { AccessLevel, PolicyUser, ProjectAbility, ProjectAccess, Visibility } from '../common/policy/policy';

/**
 * Per-snippet rules on top of the project abilities (GitLab's SnippetsFinder and project snippet
 * abilities): members and administrators see every snippet of a readable project, others see the
 * public ones, the internal ones unless they are external users, and their own. Updating and
 * deleting need update_project_snippet (master+) or being the snippet's author.
 */
export interface SnippetSubject {
  authorId: number | null;
  visibilityLevel: number;
}

/** Whether the caller sees every snippet of the project (no per-snippet filtering). */
export function seesAllSnippets(user: PolicyUser, access: ProjectAccess | undefined): boolean {
  return user.admin || (access?.level ?? 0) >= AccessLevel.GUEST;
}

export function canReadSnippet(user: PolicyUser, abilities: Set<ProjectAbility>, access: ProjectAccess | undefined, s: SnippetSubject): boolean {
  if (!abilities.has('read_project_snippet')) return false;
  if (seesAllSnippets(user, access) || s.authorId === user.id) return true;
  return s.visibilityLevel === Visibility.PUBLIC || (s.visibilityLevel === Visibility.INTERNAL && !user.external);
}

export function canUpdateSnippet(user: PolicyUser, abilities: Set<ProjectAbility>, s: SnippetSubject): boolean {
  return abilities.has('update_project_snippet') || (abilities.has('read_project_snippet') && s.authorId === user.id);
}

/** SQL condition (alias `s`, named parameters) for the snippets a non-member may see. */
export function snippetVisibilityCondition(user: PolicyUser): { sql: string; params: Record<string, unknown> } {
  return {
    sql: user.external ? '(s.visibility_level = 20 OR s.author_id = :snippetViewerId)' : '(s.visibility_level IN (10, 20) OR s.author_id = :snippetViewerId)',
    params: { snippetViewerId: user.id },
  };
}
