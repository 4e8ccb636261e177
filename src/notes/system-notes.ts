/** The wording of system notes (GitLab's): label and milestone references, label and assignment changes. SystemNotesService writes them. */

/** What a reference names: a label's or a milestone's title. */
interface Titled {
  title: string;
}

/** `~bug`, or `~"two words"` when the name needs quoting (GitLab's label reference, name format). */
export function labelReference(l: Titled): string {
  return /^[A-Za-z0-9_\-.]+$/.test(l.title) ? `~${l.title}` : `~"${l.title}"`;
}

export function milestoneReference(m: Titled): string {
  return /^[A-Za-z0-9_\-.]+$/.test(m.title) ? `%${m.title}` : `%"${m.title}"`;
}

/** `Added ~a ~b labels and removed ~c label` (GitLab's wording). */
export function labelChangeNote(added: Titled[], removed: Titled[]): string | undefined {
  const part = (verb: string, ls: Titled[]) => `${verb} ${ls.map(labelReference).join(' ')} ${ls.length === 1 ? 'label' : 'labels'}`;
  const parts: string[] = [];
  if (added.length) parts.push(part('added', added));
  if (removed.length) parts.push(part('removed', removed));
  if (parts.length === 0) return undefined;
  const text = parts.join(' and ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The assignee and milestone fields of an issue or merge request. */
export interface Assignable {
  assigneeId: number | null;
  milestoneId: number | null;
}

/**
 * The assignee and milestone part of an issue or merge request update: each field that differs from
 * `current` goes into `changes`, with its system note (`Reassigned to @u`, `Milestone changed to %m`, ...).
 */
export function assignmentChanges(
  current: Assignable,
  next: { assigneeId?: number | null; assignee: { username: string } | null; milestoneId?: number | null; milestone: Titled | null },
  changes: Partial<Assignable>,
  notes: string[],
): void {
  if (next.assigneeId !== undefined && next.assigneeId !== current.assigneeId) {
    changes.assigneeId = next.assigneeId;
    notes.push(next.assignee ? `Reassigned to @${next.assignee.username}` : 'Assignee removed');
  }
  if (next.milestoneId !== undefined && next.milestoneId !== current.milestoneId) {
    changes.milestoneId = next.milestoneId;
    notes.push(next.milestone ? `Milestone changed to ${milestoneReference(next.milestone)}` : 'Milestone removed');
  }
}
