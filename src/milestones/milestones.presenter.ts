import { Milestone } from './milestone.entity';
import { MilestoneResponse } from './milestones.responses';

/** GitLab's Milestone entity (keys in its order); `due_date` is `YYYY-MM-DD` or null. */
export function presentMilestone(m: Milestone): MilestoneResponse {
  return {
    id: m.id,
    iid: m.iid,
    project_id: m.projectId,
    title: m.title,
    description: m.description ?? '', // a string, "" when none was given (../shared/docs/spec-decisions.md #33)
    state: m.state,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    due_date: m.dueDate,
  };
}
