import { Injectable } from '@nestjs/common';
import { Transactions, Tx } from '../database/transactions';
import { DomainEvents } from '../domain-events/domain-events';
import { User, UserState } from './user.entity';
import { UsersRepository } from './users.repository';
import type { UserSummary } from './users.presenter';

/**
 * What other areas read of `users` and `identities`, and the join helpers their list queries use to
 * bring a page's authors in the same statement. The users area owns these tables: other areas call
 * this service (exported by UsersModule), never UsersRepository.
 */
@Injectable()
export class UserDirectory {
  constructor(
    private readonly users: UsersRepository,
    private readonly tx: Transactions,
    private readonly domainEvents: DomainEvents,
  ) {}

  /** Users by id, in one query (the authors, assignees and owners a page of rows refers to). */
  byIds(ids: Iterable<number | null | undefined>): Promise<Map<number, User>> {
    return this.users.byIds(ids);
  }

  byId(id: number, tx?: Tx): Promise<User | null> {
    return this.users.byId(id, tx);
  }

  /** By username, case-insensitively. */
  byUsername(username: string): Promise<User[]> {
    return this.users.byUsername(username);
  }

  /** The owner of a private token, by the token's digest (the authentication of most requests). */
  byPrivateTokenDigest(digest: string): Promise<User | null> {
    return this.users.byPrivateTokenDigest(digest);
  }

  /** The user linked to `provider` with `externUid` (a DN: compared case-insensitively). */
  byIdentity(provider: string, externUid: string): Promise<User | null> {
    return this.users.byIdentity(provider, externUid);
  }

  /** A page of `provider`'s identities after identity id `afterId` (keyset), with their users' states. */
  identitiesPage(provider: string, afterId: number, limit: number): Promise<{ id: number; userId: number; externUid: string; state: UserState }[]> {
    return this.users.identitiesPage(provider, afterId, limit);
  }

  /** Moves the users among `ids` that are in state `from` to `to`, in one statement; the ids moved. */
  moveState(ids: number[], from: UserState, to: UserState): Promise<number[]> {
    return this.users.moveState(ids, from, to);
  }

  /** Sets the user's email unless another account holds it (checked under the email's lock); whether it was set. */
  claimEmail(userId: number, email: string): Promise<boolean> {
    return this.tx.run(async (tx) => {
      await this.users.lockEmail(tx, email);
      if (await this.users.emailTaken(tx, email, userId)) return false;
      const before = await this.users.byId(userId, tx);
      await this.users.update(userId, { email }, tx);
      if (before && before.email !== email) await this.domainEvents.emit(tx, 'user.emails_changed', { userId, removed: [before.email] });
      return true;
    });
  }

  async setName(userId: number, name: string): Promise<void> {
    await this.users.update(userId, { name });
  }

  async setState(userId: number, state: UserState): Promise<void> {
    await this.users.setState(userId, state);
  }

  /** The select list of a users row joined as `alias` in another area's query, each column under `prefix.property`. */
  joinedColumns(alias: string, prefix: string): string {
    return this.users.joinedColumns(alias, prefix);
  }

  /** joinedColumns as [expression, result name] pairs, for a query builder's addSelect (read back with joined). */
  joinedSelections(alias: string, prefix: string): [string, string][] {
    return this.users.joinedSelections(alias, prefix);
  }

  /** The user summary of a row read with joinedColumns or joinedSelections(…, `prefix`), or null when the join found none. */
  joined(row: Record<string, unknown>, prefix: string): UserSummary | null {
    return this.users.joined(row, prefix);
  }
}
