/** GitLab 8.12's notification levels and their numbers (`notification_level` in a project's `permissions`). */
export const NOTIFICATION_LEVELS = { disabled: 0, participating: 1, watch: 2, global: 3, mention: 4, custom: 5 } as const;
export type NotificationLevel = keyof typeof NOTIFICATION_LEVELS;

export function levelName(n: number): NotificationLevel {
  return (Object.keys(NOTIFICATION_LEVELS) as NotificationLevel[]).find((k) => NOTIFICATION_LEVELS[k] === n) ?? 'global';
}

/** The switches of the `custom` level (GitLab's NotificationSetting::EMAIL_EVENTS, with the pipeline ones). */
export const CUSTOM_EVENTS = [
  'new_note',
  'new_issue',
  'reopen_issue',
  'close_issue',
  'reassign_issue',
  'new_merge_request',
  'reopen_merge_request',
  'close_merge_request',
  'reassign_merge_request',
  'merge_merge_request',
  'failed_pipeline',
  'success_pipeline',
] as const;
export type CustomEvent = (typeof CUSTOM_EVENTS)[number];
export type CustomEvents = Partial<Record<CustomEvent, boolean>>;

/** A user's setting at one level (global, a group, a project). */
export interface LevelSetting {
  level: NotificationLevel;
  events: CustomEvents;
}

/**
 * The setting that applies to a user in a project, as GitLab resolves it: the project's unless it is
 * `global`, then the group's unless `global`, then the user's global one (default `participating`).
 */
export function effectiveSetting(project: LevelSetting | undefined, group: LevelSetting | undefined, global: LevelSetting | undefined): LevelSetting {
  if (project && project.level !== 'global') return project;
  if (group && group.level !== 'global') return group;
  if (global && global.level !== 'global') return global;
  return { level: 'participating', events: {} };
}
