import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The one query of the health area: whether the database answers. */
@Injectable()
export class HealthRepository {
  constructor(private readonly ds: DataSource) {}

  async ping(): Promise<void> {
    await this.ds.query('SELECT 1');
  }
}
