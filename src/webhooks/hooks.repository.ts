import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import { HookSwitch, WebHook, WebHookLog } from './web-hook.entity';

export const LOGS_KEPT = 100;

/** Every query on `web_hooks` and `web_hook_logs` (system hooks and project webhooks alike). */
@Injectable()
export class HooksRepository {
  constructor(
    @InjectRepository(WebHook) private readonly hooks: Repository<WebHook>,
    @InjectRepository(WebHookLog) private readonly logs: Repository<WebHookLog>,
  ) {}

  private repo(tx?: Tx): Repository<WebHook> {
    return tx ? tx.getRepository(WebHook) : this.hooks;
  }

  systemHooks(): Promise<WebHook[]> {
    return this.hooks.find({ where: { type: 'SystemHook' }, order: { id: 'ASC' } });
  }

  projectHooks(projectId: number): Promise<WebHook[]> {
    return this.hooks.find({ where: { type: 'ProjectHook', projectId }, order: { id: 'ASC' } });
  }

  findSystem(id: number): Promise<WebHook | null> {
    return this.hooks.findOne({ where: { id, type: 'SystemHook', projectId: IsNull() } });
  }

  findInProject(projectId: number, id: number): Promise<WebHook | null> {
    return this.hooks.findOne({ where: { id, type: 'ProjectHook', projectId } });
  }

  find(id: number): Promise<WebHook | null> {
    return this.hooks.findOne({ where: { id } });
  }

  /** Enabled hooks that take an event: the project's (when `projectId`) or the system hooks, one query. */
  async subscribers(scope: { projectId: number } | 'system', on?: HookSwitch): Promise<WebHook[]> {
    const qb = this.hooks.createQueryBuilder('h').where('h.disabled_at IS NULL');
    if (scope === 'system') qb.andWhere(`h.type = 'SystemHook'`);
    else qb.andWhere(`h.type = 'ProjectHook' AND h.project_id = :projectId`, { projectId: scope.projectId });
    if (on) qb.andWhere(`h.${snake(on)} = true`);
    return qb.orderBy('h.id', 'ASC').getMany();
  }

  /** Inserts and reads the row back (with the database's defaults). */
  async insert(tx: Tx | undefined, values: Partial<WebHook>): Promise<WebHook> {
    const repo = this.repo(tx);
    const saved = await repo.save(repo.create(values));
    return repo.findOneByOrFail({ id: saved.id });
  }

  async update(id: number, changes: Partial<WebHook>): Promise<WebHook> {
    if (Object.keys(changes).length) await this.hooks.update({ id }, changes);
    return this.hooks.findOneByOrFail({ id });
  }

  async delete(id: number): Promise<void> {
    await this.hooks.delete({ id });
  }

  /** Success: the failure streak ends (and a hook disabled for it is not re-enabled here: only an update does). */
  async recordSuccess(id: number, status: number): Promise<void> {
    await this.hooks.query(`UPDATE web_hooks SET recent_failures = 0, last_status = $2 WHERE id = $1`, [id, status]);
  }

  /** A failed attempt: the streak grows; at `disableAfter` (> 0) consecutive failures the hook is disabled. */
  async recordFailure(id: number, status: number | null, error: string, disableAfter: number): Promise<void> {
    await this.hooks.query(
      `UPDATE web_hooks SET recent_failures = recent_failures + 1, last_status = $2, last_error = $3, last_failure_at = now(),
              disabled_at = CASE WHEN $4 > 0 AND recent_failures + 1 >= $4 THEN coalesce(disabled_at, now()) ELSE disabled_at END
        WHERE id = $1`,
      [id, status, error, disableAfter],
    );
  }

  /** Appends a delivery to the hook's log and trims it to the last LOGS_KEPT entries (the hook may be gone: then nothing). */
  async log(entry: Partial<WebHookLog> & { webHookId: number }): Promise<void> {
    await this.logs.query(
      `INSERT INTO web_hook_logs (web_hook_id, trigger, event, attempt, response_status, execution_duration, response_body, error)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM web_hooks WHERE id = $1)`,
      [
        entry.webHookId,
        entry.trigger,
        entry.event,
        entry.attempt ?? 0,
        entry.responseStatus ?? null,
        entry.executionDuration ?? 0,
        entry.responseBody ?? null,
        entry.error ?? null,
      ],
    );
    await this.logs.query(
      `DELETE FROM web_hook_logs WHERE web_hook_id = $1 AND id < (
         SELECT id FROM web_hook_logs WHERE web_hook_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`,
      [entry.webHookId, LOGS_KEPT - 1],
    );
  }

  /** The hook's deliveries, newest first (at most LOGS_KEPT exist). */
  deliveries(hookId: number): Promise<WebHookLog[]> {
    return this.logs.find({ where: { webHookId: hookId }, order: { id: 'DESC' }, take: LOGS_KEPT });
  }
}

const COLUMNS: Record<HookSwitch, string> = {
  pushEvents: 'push_events',
  tagPushEvents: 'tag_push_events',
  issuesEvents: 'issues_events',
  mergeRequestsEvents: 'merge_requests_events',
  noteEvents: 'note_events',
  buildEvents: 'build_events',
};
function snake(s: HookSwitch): string {
  return COLUMNS[s];
}
