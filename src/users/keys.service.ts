import { Injectable } from '@nestjs/common';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { DomainEvents, keySnapshot } from '../domain-events/domain-events';
import sshpk from 'sshpk';
import { isUniqueViolation, NotFound, ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { Transactions, Tx } from '../database/transactions';
import { CreateKeyDto } from './dto/key.dto';
import { SshKey } from './key.entity';
import { KeysRepository } from './keys.repository';
import { UserViews } from './user-views.service';
import { User } from './user.entity';
import { UserView } from './users.presenter';
import { UsersRepository } from './users.repository';
import type { Caller } from '../common/caller/caller';

const ALLOWED_TYPES = new Set(['rsa', 'ed25519', 'ecdsa']);
const MIN_RSA_BITS = 2048; // the SSH server accepts nothing smaller (src/ssh)
const MAX_KEY_LENGTH = 16 * 1024;

export interface ParsedKey {
  /** Normalised `type base64 [comment]` text. */
  text: string;
  /** MD5 fingerprint in GitLab 8's colon form (`aa:bb:...`). */
  fingerprint: string;
}

/** Parses an OpenSSH public key; rsa (≥ 2048 bits), ed25519 and ecdsa only. Undefined when invalid. */
export function parsePublicKey(raw: string): ParsedKey | undefined {
  const text = raw.trim().replace(/\s+/g, ' ');
  if (!text || text.length > MAX_KEY_LENGTH || !/^(ssh-|ecdsa-)/.test(text)) return undefined;
  try {
    const key = sshpk.parseKey(text, 'ssh');
    if (!ALLOWED_TYPES.has(key.type)) return undefined;
    if (key.type === 'rsa' && key.size < MIN_RSA_BITS) return undefined;
    return { text, fingerprint: key.fingerprint('md5').toString('hex') };
  } catch {
    return undefined;
  }
}

const fingerprintTaken = () => new ValidationFailed({ fingerprint: ['has already been taken'], key: ['has already been taken'] });

/**
 * A key's title and text checked as GitLab 8.17's `Key` validations (user keys and deploy keys alike):
 * the parsed key, or `400` with the map (`title` too long, `key` invalid and `fingerprint cannot be generated`).
 */
export function validKey(title: string, raw: string): ParsedKey {
  const errors: ValidationMap = {};
  if (title.length > 255) errors.title = ['is too long (maximum is 255 characters)'];
  const parsed = parsePublicKey(raw);
  if (!parsed) {
    errors.key = ['is invalid'];
    errors.fingerprint = ['cannot be generated'];
  }
  if (Object.keys(errors).length || !parsed) throw new ValidationFailed(errors);
  return parsed;
}

/**
 * SSH keys of users: parsed and fingerprinted, fingerprints unique instance-wide. `…Own` methods act
 * on the caller's keys; `…Of` methods on a user's by path id (the routes are `@Admin()`).
 */
@Injectable()
export class KeysService {
  constructor(
    private readonly keys: KeysRepository,
    private readonly users: UsersRepository,
    private readonly views: UserViews,
    private readonly tx: Transactions,
    private readonly domainEvents: DomainEvents,
  ) {}

  /** The user named by a path id, or `404 User Not Found`. */
  private async owner(userId: number): Promise<User> {
    const user = await this.users.byId(userId);
    if (!user) throw new NotFound('User');
    return user;
  }

  /** The stored key with this MD5 fingerprint and its owner (SSH authentication), or null. */
  withOwnerByFingerprint(fingerprint: string): Promise<{ key: SshKey; owner: User } | null> {
    return this.keys.withOwnerByFingerprint(fingerprint);
  }

  /** Whole on the first page unless `per_page` says otherwise (clients read the list whole). */
  async listOwn(user: Caller, q: PageParams): Promise<Paginated<SshKey>> {
    return paginateAll(await this.keys.listFor(user.id), q, { whole: true });
  }

  async listOf(userId: number, q: PageParams): Promise<Paginated<SshKey>> {
    return paginateAll(await this.keys.listFor((await this.owner(userId)).id), q, { whole: true });
  }

  async getOwn(user: Caller, id: number): Promise<SshKey> {
    const key = await this.keys.findOwn(user.id, id);
    if (!key) throw new NotFound('Key');
    return key;
  }

  /** `GET /keys/:id` (admin): the key with its owner's full view. */
  async getWithOwner(id: number): Promise<{ key: SshKey; owner: UserView }> {
    const key = await this.keys.byId(id);
    if (!key) throw new NotFound('Key');
    const user = key.userId === null ? null : await this.users.byId(key.userId);
    if (!user) throw new NotFound('Key');
    return { key, owner: await this.views.oneFull(user) };
  }

  addOwn(user: Caller, dto: CreateKeyDto): Promise<SshKey> {
    return this.add(user, dto);
  }

  async addTo(userId: number, dto: CreateKeyDto): Promise<SshKey> {
    return this.add(await this.owner(userId), dto);
  }

  /** Adds a key: invalid → 400 map; a taken fingerprint → 400 map. */
  private async add(user: Caller, dto: CreateKeyDto): Promise<SshKey> {
    const parsed = validKey(dto.title, dto.key);
    try {
      return await this.tx.run(async (tx) => {
        const key = await this.keys.insert({ userId: user.id, title: dto.title, key: parsed.text, fingerprint: parsed.fingerprint }, tx);
        await this.domainEvents.emit(tx, 'key.created', { key: keySnapshot(key) }); // system hooks
        return key;
      });
    } catch (e) {
      if (isUniqueViolation(e, 'keys_fingerprint_key')) throw fingerprintTaken();
      throw e;
    }
  }

  /** A deploy key (SSH authentication of a key no user owns), by its fingerprint, or null. */
  deployKeyByFingerprint(fingerprint: string): Promise<SshKey | null> {
    return this.keys.deployKeyByFingerprint(fingerprint);
  }

  /**
   * Writes a new deploy key row in the caller's transaction (the deploy-keys area enables it on its
   * project in the same one). The key's rules are a user key's (`validKey`); a fingerprint already
   * stored — a user's key or another deploy key — is GitLab's `has already been taken`.
   */
  async insertDeployKey(tx: Tx, values: { title: string; key: ParsedKey; canPush: boolean }): Promise<SshKey> {
    try {
      return await this.keys.insertDeployKey(tx, { title: values.title, key: values.key.text, fingerprint: values.key.fingerprint, canPush: values.canPush });
    } catch (e) {
      if (isUniqueViolation(e, 'keys_fingerprint_key')) throw fingerprintTaken();
      throw e;
    }
  }

  /**
   * Removes the deploy keys enabled on no project. The API writes a deploy key with its first project
   * and removes it with its last (one transaction each), so only a deleted project (its links cascade)
   * leaves one behind.
   */
  removeOrphanedDeployKeys(): Promise<number> {
    return this.keys.deleteOrphanedDeployKeys();
  }

  /** Removes a deploy key row (its project links go with it), in the caller's transaction. */
  deleteDeployKey(tx: Tx, id: number): Promise<void> {
    return this.keys.deleteDeployKey(tx, id);
  }

  /** Own key delete: idempotent, the deleted key or undefined (GitLab swallows the errors). */
  async removeOwn(user: Caller, id: number): Promise<SshKey | undefined> {
    const removed = await this.tx.run(async (tx) => {
      const key = await this.keys.findOwn(user.id, id, tx);
      if (key) {
        await this.keys.delete(tx, id);
        await this.domainEvents.emit(tx, 'key.destroyed', { key: keySnapshot(key) }); // system hooks (the row is gone)
      }
      return key ?? undefined;
    });
    return removed;
  }

  /** Admin delete of a user's key: `404 User Not Found`, then `404 Key Not Found` when absent. */
  async removeOf(userId: number, id: number): Promise<SshKey> {
    const key = await this.removeOwn(await this.owner(userId), id);
    if (!key) throw new NotFound('Key');
    return key;
  }
}
