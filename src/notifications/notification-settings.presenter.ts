import { CUSTOM_EVENTS, CustomEvents, NotificationLevel } from './notification-levels';

/** A setting as the service hands it over (defaults filled in). */
export interface NotificationSettingView {
  level: NotificationLevel;
  events: CustomEvents;
}

/** GitLab's Entities::NotificationSetting: `level`, and `events` (every switch) for the custom level. */
export function presentNotificationSetting(s: NotificationSettingView): Record<string, unknown> {
  const out: Record<string, unknown> = { level: s.level };
  if (s.level === 'custom') out.events = Object.fromEntries(CUSTOM_EVENTS.map((e) => [e, s.events[e] === true]));
  return out;
}

/** Entities::GlobalNotificationSetting: the same and `notification_email`. */
export function presentGlobalNotificationSetting(s: NotificationSettingView & { notificationEmail: string }): Record<string, unknown> {
  return { ...presentNotificationSetting(s), notification_email: s.notificationEmail };
}
