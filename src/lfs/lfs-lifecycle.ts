import { Injectable } from '@nestjs/common';
import { DomainEventCatalogue } from '../domain-events/domain-event-catalogue';
import { DomainEventMeta, OnDomainEvent } from '../domain-events/domain-events';
import { Transactions } from '../database/transactions';
import { LfsStorage } from './lfs-storage';
import { LfsRepository } from './lfs.repository';

/**
 * LFS objects follow their projects: a fork is linked, in its creating transaction, to every object of
 * the project it was forked from (rows, never copies of files: 8.17 served a fork from its source's
 * objects); a deleted project's links go with it (ON DELETE CASCADE) and then the objects no project
 * links any more are deleted, rows first and then their files.
 */
@Injectable()
export class LfsLifecycle {
  constructor(
    private readonly repo: LfsRepository,
    private readonly storage: LfsStorage,
    private readonly tx: Transactions,
  ) {}

  @OnDomainEvent('project.created', { inTransaction: true })
  async onProjectCreated(e: DomainEventCatalogue['project.created'], meta: DomainEventMeta<'project.created'>): Promise<void> {
    if (!meta.tx) throw new Error("project.created: an in-transaction handler runs in the emitter's transaction");
    await this.repo.linkForkToSource(meta.tx, e.project.id);
  }

  @OnDomainEvent('project.destroyed', { durable: true, queue: 'lfs.orphans' })
  async onProjectDestroyed(): Promise<void> {
    await this.removeOrphans();
  }

  /**
   * Deletes the objects no project links and their files, each under its lock (an upload of the same oid
   * meanwhile links it again and keeps its file); answers how many went.
   */
  async removeOrphans(): Promise<number> {
    let removed = 0;
    for (const oid of await this.repo.unlinked()) {
      await this.tx.run(async (tx) => {
        await this.repo.lockOid(tx, oid);
        if (!(await this.repo.deleteIfUnlinked(tx, oid))) return;
        await this.storage.remove(oid);
        removed++;
      });
    }
    return removed;
  }
}
