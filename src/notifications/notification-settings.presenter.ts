import { CUSTOM_EVENTS, CustomEvent, CustomEvents, NotificationLevel } from './notification-levels';
import { GlobalNotificationSettingResponse, NotificationSettingResponse } from './notification-settings.responses';

/** A setting as the service hands it over (defaults filled in). */
export interface NotificationSettingView {
  level: NotificationLevel;
  events: CustomEvents;
}

/** GitLab's Entities::NotificationSetting: `level`, and `events` (every switch) for the custom level. */
export function presentNotificationSetting(s: NotificationSettingView): NotificationSettingResponse {
  const out: NotificationSettingResponse = { level: s.level };
  if (s.level === 'custom') out.events = Object.fromEntries(CUSTOM_EVENTS.map((e) => [e, s.events[e] === true])) as Record<CustomEvent, boolean>;
  return out;
}

/** Entities::GlobalNotificationSetting: the same and `notification_email`. */
export function presentGlobalNotificationSetting(s: NotificationSettingView & { notificationEmail: string }): GlobalNotificationSettingResponse {
  return { ...presentNotificationSetting(s), notification_email: s.notificationEmail };
}
