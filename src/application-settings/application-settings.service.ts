import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DeclaredMethod, findDeclaredMethods } from '../common/discovery/declared-methods';
import { DbNotifications } from '../database/notifications';
import { UpdateApplicationSettingsDto } from './dto/application-settings.dto';
import { checkSettings } from './dto/settings-rules';
import { ApplicationSettings } from './application-settings.entity';
import { ApplicationSettingsRepository } from './application-settings.repository';
import { ADMIN_SETTINGS_FIELD, SETTINGS_RESET_ACTION } from './settings-extensions';

export { visibilityLevel } from './dto/settings-rules';

const CACHE_MS = 5000;
const CHANNEL = 'application_settings_changed';

/**
 * The instance's admin-editable settings, read by every area through this one service. Kept in
 * memory for a few seconds so that hot paths (presenters' avatar URLs, sign-in) cost no query; a
 * change made through any instance is announced over LISTEN/NOTIFY and drops every instance's copy
 * at once (the time limit is only the safety net).
 */
@Injectable()
export class ApplicationSettingsService implements OnModuleInit {
  private cached?: { value: ApplicationSettings; at: number };

  constructor(
    private readonly settings: ApplicationSettingsRepository,
    private readonly notifications: DbNotifications,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** `@AdminSettingsField` and `@SettingsResetAction` methods of other areas (settings-extensions.ts). */
  private adminExtras: DeclaredMethod<string>[] = [];
  private resetters: DeclaredMethod<string>[] = [];

  /**
   * The runners registration token as stored (digest and encryption, nulls until first used). CI
   * creates, checks and resets it through these; the columns are the settings row's.
   */
  runnersToken(): Promise<{ digest: string | null; encrypted: string | null }> {
    return this.settings.runnersRegistrationToken();
  }

  /** Stores a first runners registration token unless one exists (concurrent first uses agree on one). */
  async setRunnersTokenIfAbsent(digest: string, encrypted: string): Promise<void> {
    await this.get(); // the settings row exists from here on
    await this.settings.setRunnersRegistrationTokenIfAbsent(digest, encrypted);
  }

  /** Replaces the runners registration token. */
  replaceRunnersToken(digest: string, encrypted: string): Promise<void> {
    return this.settings.replaceRunnersRegistrationToken(digest, encrypted);
  }

  /** The fields other areas add to the admin view of the settings (CI: `runners_registration_token`). */
  async adminFields(): Promise<Record<string, unknown>> {
    const values = await Promise.all(this.adminExtras.map(async (f) => [f.meta, await f.call()] as const));
    return Object.fromEntries(values);
  }

  /** Runs a declared reset action (after the settings row exists). */
  async reset(name: string): Promise<void> {
    const fn = this.resetters.find((r) => r.meta === name);
    if (!fn) throw new Error(`no reset action ${name}`);
    await this.get();
    await fn.call();
  }

  async onModuleInit(): Promise<void> {
    this.adminExtras = findDeclaredMethods<string>(this.discovery, this.scanner, ADMIN_SETTINGS_FIELD);
    this.resetters = findDeclaredMethods<string>(this.discovery, this.scanner, SETTINGS_RESET_ACTION);
    await this.notifications.listen(CHANNEL, () => this.forget());
  }

  async get(): Promise<ApplicationSettings> {
    // the copy is used only once every notification committed before this call has been handled (a
    // change made through another instance a moment ago is seen), and a read that a change overtook
    // is not kept (the epoch)
    if (this.cached && Date.now() - this.cached.at < CACHE_MS && (await this.notifications.sync()) && this.cached) return this.cached.value;
    const epoch = this.epoch;
    const row = await this.settings.current();
    if (epoch === this.epoch) this.cached = { value: row, at: Date.now() };
    return row;
  }

  private epoch = 0;

  private forget(): void {
    this.epoch++;
    this.cached = undefined;
  }

  /** Re-reads the settings now, starting a fresh cache window. */
  async reload(): Promise<ApplicationSettings> {
    this.forget();
    return this.get();
  }

  /** Applies the given fields; `null` or absent means "leave as is". Invalid values: 400 with a field map. */
  async update(dto: UpdateApplicationSettingsDto): Promise<ApplicationSettings> {
    const current = await this.get();
    const next = checkSettings(dto);
    if (dto.reset_runners_registration_token === true) await this.reset('runners_registration_token');
    if (Object.keys(next).length === 0) return current;
    await this.settings.update(current.id, next);
    this.forget();
    await this.notifications.notify(CHANNEL);
    return this.get();
  }
}
