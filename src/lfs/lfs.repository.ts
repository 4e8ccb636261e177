import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { rowsOf } from '../database/query-rows';
import { Tx } from '../database/transactions';
import { LfsObject } from './lfs-object.entity';

interface OidRow {
  oid: string;
}
interface IdRow {
  id: number;
}
interface SizeRow {
  size: string | null;
}

/** Every statement on `lfs_objects` and `lfs_objects_projects`. */
@Injectable()
export class LfsRepository {
  constructor(@InjectRepository(LfsObject) private readonly objects: Repository<LfsObject>) {}

  private run(sql: string, params: unknown[], tx?: Tx): Promise<unknown> {
    return tx ? tx.query(sql, params) : this.objects.query(sql, params);
  }

  /** Which of `oids` the project may serve (linked to it). */
  async linkedOids(projectId: number, oids: string[]): Promise<Set<string>> {
    if (!oids.length) return new Set();
    const rows = rowsOf<OidRow>(
      await this.run(
        `SELECT o.oid FROM lfs_objects o JOIN lfs_objects_projects l ON l.lfs_object_id = o.id
          WHERE l.project_id = $1 AND o.oid = ANY($2::varchar[])`,
        [projectId, oids],
      ),
    );
    return new Set(rows.map((r) => r.oid));
  }

  /** Records the object (once) and links it to the project (once), in one transaction. */
  async link(tx: Tx, projectId: number, oid: string, size: number): Promise<void> {
    const [row] = rowsOf<IdRow>(
      await tx.query(
        `INSERT INTO lfs_objects (oid, size) VALUES ($1, $2)
         ON CONFLICT (oid) DO UPDATE SET updated_at = now() RETURNING id`,
        [oid, size],
      ),
    );
    await tx.query(`INSERT INTO lfs_objects_projects (lfs_object_id, project_id) VALUES ($1, $2) ON CONFLICT (project_id, lfs_object_id) DO NOTHING`, [
      row.id,
      projectId,
    ]);
  }

  /** A new fork gets the links of the project it was forked from (the files are shared, never copied). */
  async linkForkToSource(tx: Tx, projectId: number): Promise<void> {
    await tx.query(
      `INSERT INTO lfs_objects_projects (lfs_object_id, project_id)
       SELECT l.lfs_object_id, p.id FROM projects p JOIN lfs_objects_projects l ON l.project_id = p.forked_from_project_id
        WHERE p.id = $1
       ON CONFLICT (project_id, lfs_object_id) DO NOTHING`,
      [projectId],
    );
  }

  /** Deletes the objects no project links any more and answers their oids (their files go next). */
  async deleteUnlinked(tx: Tx): Promise<string[]> {
    const rows = rowsOf<OidRow>(
      await tx.query(`DELETE FROM lfs_objects o WHERE NOT EXISTS (SELECT 1 FROM lfs_objects_projects l WHERE l.lfs_object_id = o.id) RETURNING o.oid`, []),
    );
    return rows.map((r) => r.oid);
  }

  /** Whether any row still names `oid` (a file is removed only when none does). */
  async exists(oid: string, tx?: Tx): Promise<boolean> {
    return rowsOf<OidRow>(await this.run(`SELECT oid FROM lfs_objects WHERE oid = $1`, [oid], tx)).length > 0;
  }

  /** Bytes of LFS objects a project links (8.17's statistics `lfs_objects_size`). */
  async sizeOf(projectId: number): Promise<number> {
    const [row] = rowsOf<SizeRow>(
      await this.run(`SELECT sum(o.size)::text AS size FROM lfs_objects o JOIN lfs_objects_projects l ON l.lfs_object_id = o.id WHERE l.project_id = $1`, [
        projectId,
      ]),
    );
    return Number(row?.size ?? 0);
  }
}
