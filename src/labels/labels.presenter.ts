import { Label } from './label.entity';
import { LabelRecordResponse, LabelResponse } from './labels.responses';

/** What a label response needs besides the row: issue counts and the viewer's subscription. */
export interface LabelDetails {
  label: Label;
  openIssuesCount: number;
  closedIssuesCount: number;
  openMergeRequestsCount: number;
  subscribed: boolean;
}

/** GitLab's Label entity (with the counts of LabelDetails), plus `id` so clients can address it. */
export function presentLabel(d: LabelDetails): LabelResponse {
  return {
    id: d.label.id,
    name: d.label.title,
    color: d.label.color,
    description: d.label.description,
    open_issues_count: d.openIssuesCount,
    closed_issues_count: d.closedIssuesCount,
    open_merge_requests_count: d.openMergeRequestsCount,
    subscribed: d.subscribed,
  };
}

/** The spec's delete view: the label record itself. */
export function presentLabelRecord(l: Label): LabelRecordResponse {
  return {
    id: l.id,
    title: l.title,
    color: l.color,
    project_id: l.projectId,
    created_at: l.createdAt,
    updated_at: l.updatedAt,
    template: l.template,
    description: l.description,
  };
}
