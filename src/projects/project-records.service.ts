import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { ProjectRecordsRepository } from './project-records.repository';

/**
 * The changes to `projects` that other areas make inside their own transactions: the activity an
 * event records (`last_activity_at`) and the personal projects of a user being deleted. The projects
 * area owns `projects`; ProjectRecordsModule depends on no other area, so the events and users areas
 * (which ProjectsModule itself imports or is reached from) can import it.
 */
@Injectable()
export class ProjectRecordsService {
  constructor(private readonly records: ProjectRecordsRepository) {}

  /** Touches the projects' `last_activity_at` (an event was recorded on them), in `tx` when given. */
  touchActivity(projectIds: number[], tx?: Tx): Promise<void> {
    return this.records.touchActivity(projectIds, tx);
  }

  /**
   * Deletes the rows of a user's personal projects in the deleting transaction (before its namespace
   * goes); the ids of those projects, whose repositories the caller removes after commit.
   */
  removePersonal(tx: Tx, ownerId: number): Promise<number[]> {
    return this.records.deletePersonal(tx, ownerId);
  }
}
