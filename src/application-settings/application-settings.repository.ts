import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApplicationSettings } from './application-settings.entity';

/** The one row of `application_settings`. */
@Injectable()
export class ApplicationSettingsRepository {
  constructor(@InjectRepository(ApplicationSettings) private readonly settings: Repository<ApplicationSettings>) {}

  /** The settings row, created with the defaults of the table when there is none yet. */
  async current(): Promise<ApplicationSettings> {
    const row = await this.settings.findOne({ where: {}, order: { id: 'ASC' } });
    return row ?? this.settings.save(this.settings.create({}));
  }

  async update(id: number, changes: Partial<ApplicationSettings>): Promise<void> {
    await this.settings.update({ id }, changes);
  }

  /** The runners registration token, digested and encrypted (nulls until first used). */
  async runnersRegistrationToken(): Promise<{ digest: string | null; encrypted: string | null }> {
    const rows: { d: string | null; e: string | null }[] = await this.settings.query(
      `SELECT runners_registration_token_digest AS d, runners_registration_token_encrypted AS e
       FROM application_settings ORDER BY id LIMIT 1`,
    );
    return { digest: rows[0]?.d ?? null, encrypted: rows[0]?.e ?? null };
  }

  /** Sets the runners registration token unless one exists (concurrent first uses agree on one). */
  async setRunnersRegistrationTokenIfAbsent(digest: string, encrypted: string): Promise<void> {
    await this.settings.query(
      `UPDATE application_settings SET runners_registration_token_digest = $1, runners_registration_token_encrypted = $2
       WHERE id = (SELECT min(id) FROM application_settings) AND runners_registration_token_digest IS NULL`,
      [digest, encrypted],
    );
  }

  async replaceRunnersRegistrationToken(digest: string, encrypted: string): Promise<void> {
    await this.settings.query(
      `UPDATE application_settings SET runners_registration_token_digest = $1, runners_registration_token_encrypted = $2
       WHERE id = (SELECT min(id) FROM application_settings)`,
      [digest, encrypted],
    );
  }
}
