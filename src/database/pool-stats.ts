import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The database pool's connection counts (for metrics), read off the driver without a query. */
@Injectable()
export class PoolStats {
  constructor(private readonly ds: DataSource) {}

  snapshot(): Record<string, number> {
    const pool = (this.ds.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number } }).master;
    return pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : {};
  }
}
