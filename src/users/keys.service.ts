import { Injectable } from '@nestjs/common';
import { DomainEvents } from '../events/domain-events';
import sshpk from 'sshpk';
import { DataSource } from 'typeorm';
import { isUniqueViolation, NotFound, ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { Params, parseId } from '../common/params/params';
import { SshKey } from './key.entity';
import { User } from './user.entity';

const ALLOWED_TYPES = new Set(['rsa', 'ed25519', 'ecdsa']);
const MIN_RSA_BITS = 1024;
const MAX_KEY_LENGTH = 16 * 1024;

export interface ParsedKey {
  /** Normalised `type base64 [comment]` text. */
  text: string;
  /** MD5 fingerprint in GitLab 8's colon form (`aa:bb:...`). */
  fingerprint: string;
}

/** Parses an OpenSSH public key; rsa (≥ 1024 bits), ed25519 and ecdsa only. Undefined when invalid. */
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

/** SSH keys of users: parsed and fingerprinted, fingerprints unique instance-wide. */
@Injectable()
export class KeysService {
  constructor(
    private readonly ds: DataSource,
    private readonly domainEvents: DomainEvents,
  ) {}

  listFor(user: User): Promise<SshKey[]> {
    return this.ds.getRepository(SshKey).find({ where: { userId: user.id }, order: { id: 'ASC' } });
  }

  async getOwn(user: User, rawId: string): Promise<SshKey> {
    const id = parseId(rawId);
    const key = id === undefined ? null : await this.ds.getRepository(SshKey).findOne({ where: { id, userId: user.id } });
    if (!key) throw new NotFound('Key');
    return key;
  }

  /** `GET /keys/:id` (admin): the key with its owner. */
  async getWithOwner(rawId: string): Promise<{ key: SshKey; user: User }> {
    const id = parseId(rawId);
    const key = id === undefined ? null : await this.ds.getRepository(SshKey).findOne({ where: { id } });
    if (!key) throw new NotFound('Key');
    const user = await this.ds.getRepository(User).findOneOrFail({ where: { id: key.userId } });
    return { key, user };
  }

  /** Adds a key: `title` and `key` required; invalid → 400 map; a taken fingerprint → 400 map. */
  async add(user: User, p: Params): Promise<SshKey> {
    const title = p.requireString('title').trim();
    const rawKey = p.requireString('key');
    const errors: ValidationMap = {};
    if (title.length > 255) errors.title = ['is too long (maximum is 255 characters)'];
    const parsed = parsePublicKey(rawKey);
    if (!parsed) {
      errors.key = ['is invalid'];
      errors.fingerprint = ['cannot be generated'];
    }
    if (Object.keys(errors).length || !parsed) throw new ValidationFailed(errors);
    const repo = this.ds.getRepository(SshKey);
    try {
      const key = await repo.save(repo.create({ userId: user.id, title, key: parsed.text, fingerprint: parsed.fingerprint }));
      this.domainEvents.emit('key.created', { key }); // system hooks
      return key;
    } catch (e) {
      if (isUniqueViolation(e, 'keys_fingerprint_key')) {
        throw new ValidationFailed({ fingerprint: ['has already been taken'], key: ['has already been taken'] });
      }
      throw e;
    }
  }

  /** Own key delete: idempotent, the deleted key or undefined. */
  async removeOwn(user: User, rawId: string): Promise<SshKey | undefined> {
    const id = parseId(rawId);
    if (id === undefined) return undefined;
    const removed = await this.ds.transaction(async (m) => {
      const key = await m.getRepository(SshKey).findOne({ where: { id, userId: user.id } });
      if (key) await m.getRepository(SshKey).delete({ id });
      return key ?? undefined;
    });
    if (removed) this.domainEvents.emit('key.destroyed', { key: removed }); // system hooks
    return removed;
  }

  /** Admin delete of a user's key: 404 `Key Not Found` when absent. */
  async removeOf(user: User, rawId: string): Promise<SshKey> {
    const key = await this.removeOwn(user, rawId);
    if (!key) throw new NotFound('Key');
    return key;
  }
}
