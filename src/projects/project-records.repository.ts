import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import { Project } from './project.entity';

/** The writes on `projects` that other areas' transactions make (ProjectRecordsService); the rest is ProjectsRepository's. */
@Injectable()
export class ProjectRecordsRepository {
  constructor(@InjectRepository(Project) private readonly projects: Repository<Project>) {}

  /** Sets `last_activity_at` of the projects to now, in `tx` when given: one statement. */
  async touchActivity(projectIds: number[], tx?: Tx): Promise<void> {
    await (tx ?? this.projects.manager).query(`UPDATE projects SET last_activity_at = now() WHERE id = ANY($1)`, [projectIds]);
  }

  /** Deletes the projects of the user's personal namespace; their ids. One statement. */
  async deletePersonal(tx: Tx, ownerId: number): Promise<number[]> {
    const [rows]: [{ id: number }[], number] = await tx.query(
      `DELETE FROM projects WHERE namespace_id IN (SELECT id FROM namespaces WHERE kind = 'user' AND owner_id = $1) RETURNING id`,
      [ownerId],
    );
    return rows.map((p) => p.id);
  }
}
