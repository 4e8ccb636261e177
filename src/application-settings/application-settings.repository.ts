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
}
