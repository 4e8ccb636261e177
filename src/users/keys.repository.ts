import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { rowsOf } from '../database/query-rows';
import { Tx } from '../database/transactions';
import { DEPLOY_KEY, SshKey } from './key.entity';
import { User } from './user.entity';

/** Every query on `keys` (users' SSH keys and deploy keys). */
@Injectable()
export class KeysRepository {
  constructor(@InjectRepository(SshKey) private readonly keys: Repository<SshKey>) {}

  listFor(userId: number): Promise<SshKey[]> {
    return this.keys.find({ where: { userId }, order: { id: 'ASC' } });
  }

  /**
   * The key with this fingerprint and its owner, in one statement on the unique fingerprint index
   * (SSH authentication asks it on every connection, so a deleted key or a blocked owner is seen at
   * once, whichever instance made the change).
   */
  async withOwnerByFingerprint(fingerprint: string): Promise<{ key: SshKey; owner: User } | null> {
    const found = await this.keys
      .createQueryBuilder('k')
      .innerJoinAndMapOne('k.owner', User, 'u', 'u.id = k.user_id')
      .where('k.fingerprint = :fingerprint', { fingerprint })
      .getOne();
    if (!found) return null;
    const { owner } = found as SshKey & { owner: User };
    return { key: found, owner };
  }

  byId(id: number): Promise<SshKey | null> {
    return this.keys.findOne({ where: { id } });
  }

  /** A deploy key by its fingerprint (SSH authentication of a key no user owns), or null. */
  deployKeyByFingerprint(fingerprint: string): Promise<SshKey | null> {
    return this.keys.findOne({ where: { fingerprint, type: DEPLOY_KEY } });
  }

  /** A deploy key row, written in the deploy-keys area's transaction. */
  insertDeployKey(tx: Tx, values: { title: string; key: string; fingerprint: string; canPush: boolean }): Promise<SshKey> {
    const repo = tx.getRepository(SshKey);
    return repo.save(repo.create({ ...values, userId: null, type: DEPLOY_KEY }));
  }

  async deleteDeployKey(tx: Tx, id: number): Promise<void> {
    await tx.getRepository(SshKey).delete({ id, type: DEPLOY_KEY });
  }

  /** Removes the deploy keys enabled on no project (their projects were deleted); how many. */
  async deleteOrphanedDeployKeys(): Promise<number> {
    const rows = rowsOf<{ id: number }>(
      await this.keys.query(
        `DELETE FROM keys k WHERE k.type = $1 AND NOT EXISTS (SELECT 1 FROM deploy_keys_projects dp WHERE dp.deploy_key_id = k.id) RETURNING k.id`,
        [DEPLOY_KEY],
      ),
    );
    return rows.length;
  }

  findOwn(userId: number, id: number, tx?: Tx): Promise<SshKey | null> {
    return (tx ? tx.getRepository(SshKey) : this.keys).findOne({ where: { id, userId } });
  }

  insert(values: Partial<SshKey>, tx?: Tx): Promise<SshKey> {
    const repo = tx ? tx.getRepository(SshKey) : this.keys;
    return repo.save(repo.create(values));
  }

  async delete(tx: Tx, id: number): Promise<void> {
    await tx.getRepository(SshKey).delete({ id });
  }
}
