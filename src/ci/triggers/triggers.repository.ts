import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { Trigger, TriggerRequest } from './trigger.entities';

export interface TriggerRow extends Trigger {
  lastUsed: Date | null;
}

/** Every query on `ci_triggers` and `ci_trigger_requests`. */
@Injectable()
export class TriggersRepository {
  constructor(
    @InjectRepository(Trigger) private readonly triggers: Repository<Trigger>,
    @InjectRepository(TriggerRequest) private readonly requests: Repository<TriggerRequest>,
  ) {}

  /** Live triggers of the project with `last_used` (one query). */
  async list(projectId: number): Promise<TriggerRow[]> {
    return this.triggers.query(
      `SELECT t.id, t.project_id AS "projectId", t.token_digest AS "tokenDigest", t.token_encrypted AS "tokenEncrypted",
              t.deleted_at AS "deletedAt", t.created_at AS "createdAt", t.updated_at AS "updatedAt",
              (SELECT max(r.created_at) FROM ci_trigger_requests r WHERE r.trigger_id = t.id) AS "lastUsed"
       FROM ci_triggers t WHERE t.project_id = $1 AND t.deleted_at IS NULL ORDER BY t.id`,
      [projectId],
    );
  }

  async byDigest(digest: string): Promise<TriggerRow | undefined> {
    const rows: TriggerRow[] = await this.triggers.query(
      `SELECT t.id, t.project_id AS "projectId", t.token_digest AS "tokenDigest", t.token_encrypted AS "tokenEncrypted",
              t.deleted_at AS "deletedAt", t.created_at AS "createdAt", t.updated_at AS "updatedAt",
              (SELECT max(r.created_at) FROM ci_trigger_requests r WHERE r.trigger_id = t.id) AS "lastUsed"
       FROM ci_triggers t WHERE t.token_digest = $1 AND t.deleted_at IS NULL`,
      [digest],
    );
    return rows[0];
  }

  insert(projectId: number, tokenDigest: string, tokenEncrypted: string): Promise<Trigger> {
    return this.triggers.save(this.triggers.create({ projectId, tokenDigest, tokenEncrypted }));
  }

  async softDelete(id: number): Promise<void> {
    await this.triggers.update({ id, deletedAt: IsNull() }, { deletedAt: new Date() });
  }

  addRequest(triggerId: number, variables: Record<string, string> | null): Promise<TriggerRequest> {
    return this.requests.save(this.requests.create({ triggerId, variables }));
  }

  async removeRequest(id: number): Promise<void> {
    await this.requests.delete({ id });
  }
}
