import { randomBytes } from 'node:crypto';
import { Transactions } from '../../database/transactions';
import { Injectable } from '@nestjs/common';
import { SecretsService } from '../../common/crypto/secrets.service';
import { Forbidden, MissingAttribute, NotFound } from '../../common/errors/domain-errors';
import { ApplicationSettingsService } from '../../application-settings/application-settings.service';
import { AdminSettingsField, SettingsResetAction } from '../../application-settings/settings-extensions';
import { Runner } from './runner.entity';
import { RunnerInfo, RunnersRepository } from './runners.repository';

export type { RunnerInfo } from './runners.repository';

export interface RegisterRunnerInput {
  token: string;
  description?: string;
  tagList?: string[];
  runUntagged?: boolean;
  info?: RunnerInfo;
}

/** `"a, b"` or `["a","b"]` → trimmed, distinct, non-empty tags. */
export function parseTagList(raw: unknown): string[] {
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : [];
  return [
    ...new Set(
      items
        .filter((t): t is string => typeof t === 'string')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
}

/** Runners: registration (shared or specific), removal, and authentication by runner token. */
@Injectable()
export class RunnersService {
  constructor(
    private readonly runners: RunnersRepository,
    private readonly secrets: SecretsService,
    private readonly tx: Transactions,
    private readonly settings: ApplicationSettingsService,
  ) {}

  /** A new registration token; the old one registers nothing from now on (runners it registered stay). Admins reset it through the settings. */
  @SettingsResetAction('runners_registration_token')
  async resetRegistrationToken(): Promise<void> {
    const token = this.secrets.generateToken(20);
    await this.settings.replaceRunnersToken(this.secrets.digest(token), this.secrets.encrypt(token));
  }

  /** The instance's runner registration token, created on first use (kept digested and encrypted). */
  @AdminSettingsField('runners_registration_token')
  async registrationToken(): Promise<string> {
    let t = await this.settings.runnersToken();
    if (!t.encrypted) {
      const token = this.secrets.generateToken(20);
      await this.settings.setRunnersTokenIfAbsent(this.secrets.digest(token), this.secrets.encrypt(token));
      t = await this.settings.runnersToken();
    }
    return this.secrets.decrypt(t.encrypted!);
  }

  /** The runner with this token: `400 (Bad request) "token" not given` when missing or blank, 403 when unknown. */
  async authenticate(token: string | undefined): Promise<Runner> {
    if (!token?.trim()) throw new MissingAttribute('token');
    const runner = await this.runners.byTokenDigest(this.secrets.digest(token));
    if (!runner) throw new Forbidden();
    return runner;
  }

  projectIdByRunnersToken(token: string): Promise<number | undefined> {
    return this.runners.projectIdByRunnersTokenDigest(this.secrets.digest(token));
  }

  touch(runner: Runner, info: RunnerInfo | undefined): Promise<void> {
    return this.runners.touch(runner, info ?? {});
  }

  /** Registration token → shared runner; a project's runners token → specific runner of that project. */
  async register(input: RegisterRunnerInput): Promise<{ runner: Runner; token: string }> {
    if (!input.token) throw new MissingAttribute('token');
    const digest = this.secrets.digest(input.token);
    const registration = await this.settings.runnersToken();
    let projectId: number | undefined;
    const shared = registration.digest !== null && this.secrets.safeEqual(registration.digest, digest);
    if (!shared) {
      projectId = await this.runners.projectIdByRunnersTokenDigest(digest);
      if (projectId === undefined) throw new Forbidden();
    }
    const tagList = input.tagList ?? [];
    const runUntagged = input.runUntagged ?? true;
    // GitLab 8.8: a runner that takes no untagged builds must have tags (the record does not save → 404)
    if (!runUntagged && tagList.length === 0) throw new NotFound();
    const token = randomBytes(15).toString('hex');
    const info = input.info ?? {};
    const runner = await this.tx.run((m) =>
      this.runners.create(
        m,
        {
          tokenDigest: this.secrets.digest(token),
          tokenEncrypted: this.secrets.encrypt(token),
          description: input.description ?? null,
          isShared: shared,
          runUntagged,
          tagList,
          name: info.name,
          version: info.version,
          revision: info.revision,
          platform: info.platform,
          architecture: info.architecture,
        },
        projectId,
      ),
    );
    return { runner, token };
  }

  async remove(token: string): Promise<Record<string, unknown>> {
    const runner = await this.authenticate(token);
    const row = await this.runners.delete(runner.id);
    if (!row) throw new Forbidden();
    return row;
  }
}
