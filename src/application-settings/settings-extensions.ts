import { declareMethod } from '../common/discovery/declared-methods';

export const ADMIN_SETTINGS_FIELD = Symbol('admin-settings-field');
export const SETTINGS_RESET_ACTION = Symbol('settings-reset-action');

/**
 * Another area's value shown to administrators beside the settings, as `field` (CI:
 * `runners_registration_token`): declared on the method that reads it, found by
 * ApplicationSettingsService at bootstrap (common/discovery/declared-methods.ts).
 */
export function AdminSettingsField(field: string) {
  const declare = declareMethod<string>(ADMIN_SETTINGS_FIELD, field);
  return <T extends () => Promise<unknown>>(target: object, key: string | symbol, desc: TypedPropertyDescriptor<T>): void => void declare(target, key, desc);
}

/** An admin action another area offers through the settings (`reset_<name>`), declared on the method that does it. */
export function SettingsResetAction(name: string) {
  const declare = declareMethod<string>(SETTINGS_RESET_ACTION, name);
  return <T extends () => Promise<void>>(target: object, key: string | symbol, desc: TypedPropertyDescriptor<T>): void => void declare(target, key, desc);
}
