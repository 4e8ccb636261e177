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

  /**
   * The object's lock, until `tx` ends (an advisory lock on its oid, across instances): an upload places
   * its file and links it under it, a removal deletes the row and the file under it, so no upload's link
   * is left without its file.
   */
  async lockOid(tx: Tx, oid: string): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('lfs:' || $1))`, [oid]);
  }

  /** Oids of the objects no project links any more. */
  async unlinked(): Promise<string[]> {
    const rows = rowsOf<OidRow>(
      await this.run(`SELECT o.oid FROM lfs_objects o WHERE NOT EXISTS (SELECT 1 FROM lfs_objects_projects l WHERE l.lfs_object_id = o.id)`, []),
    );
    return rows.map((r) => r.oid);
  }

  /** Deletes the object's row when no project links it (under its lock); answers whether it did. */
  async deleteIfUnlinked(tx: Tx, oid: string): Promise<boolean> {
    const rows = rowsOf<OidRow>(
      await tx.query(
        `DELETE FROM lfs_objects o WHERE o.oid = $1 AND NOT EXISTS (SELECT 1 FROM lfs_objects_projects l WHERE l.lfs_object_id = o.id) RETURNING o.oid`,
        [oid],
      ),
    );
    return rows.length > 0;
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
