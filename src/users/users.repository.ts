import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { Identity } from './identity.entity';
import { User, UserState } from './user.entity';
import { USER_SUMMARY_PROPERTIES, UserSummary } from './users.presenter';

/** The filters of `GET /users` (already validated). */
export interface UserFilter {
  /** A LIKE pattern (see containsPattern) matched against username and name… */
  pattern?: string;
  /** …and against the email: by the same pattern (administrators) or exactly, lower-cased (others). */
  email?: { pattern: string } | { exact: string };
  active?: boolean;
  blocked?: boolean;
}

/**
 * What the full view needs besides the row, as correlated sub-selects aliased to the User properties
 * they fill (`identities`, `personalProjectCount`), so that a list brings them in the same round trip.
 */
const FULL_VIEW_COLUMNS = `
  (SELECT coalesce(json_agg(json_build_object('provider', i.provider, 'externUid', i.extern_uid) ORDER BY i.id), '[]'::json)
     FROM identities i WHERE i.user_id = u.id) AS "identities",
  (SELECT count(*)::int FROM projects p JOIN namespaces n ON n.id = p.namespace_id
     WHERE n.kind = 'user' AND n.owner_id = u.id) AS "personalProjectCount"`;

/**
 * Every query on `users` and `identities`. Other areas reach users through this (exported by
 * UsersModule), never by SQL.
 *
 * Reads on the hot paths (authentication on every request, the users list, users by id) are lean: plain
 * parameterised SQL whose columns are aliased to the entity's property names. The select list is built
 * once from the User entity's own metadata — the one mapping of the table — so a row arrives shaped as a
 * User and needs no hydration (the ORM's query building and hydration cost several times the query).
 */
@Injectable()
export class UsersRepository {
  private selectList?: string;
  /** Per joined prefix: [property, result key] of every column (joined). */
  private readonly joinedKeys = new Map<string, [string, string][]>();
  /** joinedColumns per `alias prefix` (a handful: the lists' authors, assignees, owners). */
  private readonly joinedLists = new Map<string, string>();

  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  private repo(tx?: Tx): Repository<User> {
    return tx ? tx.getRepository(User) : this.users;
  }

  /** `u."col" AS "property", …` for every column of the User entity (identifiers from the metadata, quoted). */
  private get columns(): string {
    if (this.selectList === undefined) {
      const esc = (name: string) => this.users.manager.connection.driver.escape(name);
      this.selectList = this.users.metadata.columns.map((c) => `u.${esc(c.databaseName)} AS ${esc(c.propertyName)}`).join(', ');
    }
    return this.selectList;
  }

  /** `SELECT <the entity's columns> FROM users u WHERE <where> <tail>`: rows shaped as Users. */
  /** The summary columns (USER_SUMMARY_PROPERTIES) of a users row joined as `alias` in another area's query. */
  private get summaryColumns() {
    const wanted = new Set<string>(USER_SUMMARY_PROPERTIES);
    return this.users.metadata.columns.filter((c) => wanted.has(c.propertyName));
  }

  /** The select list of a users row joined as `alias` in another area's query (its summary columns), each under `prefix.property`. */
  joinedColumns(alias: string, prefix: string): string {
    const key = `${alias} ${prefix}`;
    let list = this.joinedLists.get(key);
    if (list === undefined) {
      const esc = (name: string) => this.users.manager.connection.driver.escape(name);
      list = this.summaryColumns.map((c) => `${alias}.${esc(c.databaseName)} AS ${esc(`${prefix}.${c.propertyName}`)}`).join(', ');
      this.joinedLists.set(key, list);
    }
    return list;
  }

  /** joinedColumns as [expression, result name] pairs, for a query builder's addSelect (read back with joined). */
  joinedSelections(alias: string, prefix: string): [string, string][] {
    const esc = (name: string) => this.users.manager.connection.driver.escape(name);
    return this.summaryColumns.map((c) => [`${alias}.${esc(c.databaseName)}`, `${prefix}.${c.propertyName}`]);
  }

  /** The user summary of a row read with joinedColumns or joinedSelections(…, `prefix`), or null when the join found none. */
  joined(row: Record<string, unknown>, prefix: string): UserSummary | null {
    let keys = this.joinedKeys.get(prefix);
    if (keys === undefined) {
      // the result keys once per prefix: building `prefix.property` for every column of every row cost more than the copy
      keys = this.summaryColumns.map((c): [string, string] => [c.propertyName, `${prefix}.${c.propertyName}`]);
      this.joinedKeys.set(prefix, keys);
    }
    const id = row[`${prefix}.id`];
    if (id === null || id === undefined) return null;
    const user: Record<string, unknown> = {};
    for (const [property, key] of keys) user[property] = row[key];
    return user as unknown as UserSummary;
  }

  private async lean(where: string, params: unknown[], opts: { fullView?: boolean; tx?: Tx; tail?: string } = {}): Promise<User[]> {
    const full = opts.fullView ? `, ${FULL_VIEW_COLUMNS}` : '';
    return (opts.tx ?? this.users.manager).query(`SELECT ${this.columns}${full} FROM users u WHERE ${where} ${opts.tail ?? ''}`, params);
  }

  /** Users by id, in one query (the authors, assignees and owners a page of rows refers to). */
  async byIds(ids: Iterable<number | null | undefined>): Promise<Map<number, User>> {
    const unique = [...new Set([...ids].filter((id): id is number => typeof id === 'number'))];
    if (unique.length === 0) return new Map();
    const rows = await this.lean('u.id = ANY($1)', [unique]);
    return new Map(rows.map((u) => [u.id, u]));
  }

  async byId(id: number, tx?: Tx): Promise<User | null> {
    return (await this.lean('u.id = $1', [id], { tx }))[0] ?? null;
  }

  /** The owner of a private token, by the token's digest (the authentication of most requests). */
  async byPrivateTokenDigest(digest: string): Promise<User | null> {
    return (await this.lean('u.private_token_digest = $1', [digest]))[0] ?? null;
  }

  /** By username, case-insensitively; with the full view's data when asked. */
  async byUsername(username: string, opts: { fullView?: boolean } = {}): Promise<User[]> {
    return this.lean('lower(u.username) = lower($1)', [username], opts);
  }

  /** The account a sign-in names: username or email, case-insensitively (the oldest when both match). */
  async byLogin(login: string): Promise<User | null> {
    const rows = await this.lean('lower(u.username) = lower($1) OR lower(u.email) = lower($1)', [login], { tail: 'ORDER BY u.id ASC LIMIT 1' });
    return rows[0] ?? null;
  }

  /**
   * A page of users, id descending, with the total in the same round trip (a sub-select) and, with
   * `fullView`, identities and project counts. Only a page past the end needs a second (count) query.
   */
  async page(filter: UserFilter, page: PageRequest, opts: { fullView?: boolean } = {}): Promise<[User[], number]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (v: unknown) => `$${params.push(v)}`;
    if (filter.pattern !== undefined) {
      const p = param(filter.pattern);
      let emailMatch = '';
      if (filter.email && 'pattern' in filter.email) emailMatch = ` OR lower(u.email) LIKE ${p}`;
      else if (filter.email) emailMatch = ` OR lower(u.email) = ${param(filter.email.exact)}`;
      where.push(`(lower(u.username) LIKE ${p} OR lower(u.name) LIKE ${p}${emailMatch})`);
    }
    if (filter.active) where.push(`u.state = 'active'`);
    if (filter.blocked) where.push(`u.state IN ('blocked', 'ldap_blocked')`);
    const condition = where.length ? where.join(' AND ') : 'TRUE';
    const filterParams = [...params];
    // the total as an uncorrelated sub-select (run once, an index-only count): a window count would
    // read every matching row whole before the page's LIMIT
    const rows: (User & { total_count?: string })[] = await this.users.manager.query(
      `SELECT ${this.columns}${opts.fullView ? `, ${FULL_VIEW_COLUMNS}` : ''}, (SELECT count(*) FROM users u WHERE ${condition}) AS total_count
         FROM users u WHERE ${condition}
        ORDER BY u.id DESC LIMIT ${param(page.perPage)} OFFSET ${param(page.offset)}`,
      params,
    );
    let total = rows.length ? Number(rows[0].total_count) : 0;
    if (!rows.length && page.offset > 0) {
      const c: { n: number }[] = await this.users.manager.query(`SELECT count(*)::int AS n FROM users u WHERE ${condition}`, filterParams);
      total = c[0].n;
    }
    return [rows, total];
  }

  /** Loads what the full view needs — identities and personal project counts — into the users, in one query. */
  async loadFullView(users: User[]): Promise<User[]> {
    const missing = users.filter((u) => u.identities === undefined || u.personalProjectCount === undefined);
    if (missing.length === 0) return users;
    const rows: { id: number; identities: User['identities']; personalProjectCount: number }[] = await this.users.manager.query(
      `SELECT u.id, ${FULL_VIEW_COLUMNS} FROM users u WHERE u.id = ANY($1)`,
      [missing.map((u) => u.id)],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const u of missing) {
      const r = byId.get(u.id);
      u.identities = r?.identities ?? [];
      u.personalProjectCount = r?.personalProjectCount ?? 0;
    }
    return users;
  }

  /**
   * How many users exist, after taking the bootstrap lock for the rest of the transaction (the first
   * start creates `root` when none does; concurrent starts wait for each other).
   */
  async lockAndCount(tx: Tx): Promise<number> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('bootstrap:root'))`);
    const rows: { n: number }[] = await tx.query(`SELECT count(*)::int AS n FROM users`);
    return rows[0].n;
  }

  insert(tx: Tx, values: Partial<User>): Promise<User> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }

  async update(id: number, changes: Partial<User>, tx?: Tx): Promise<void> {
    if (Object.keys(changes).length) await this.repo(tx).update({ id }, changes);
  }

  setState(id: number, state: UserState, tx?: Tx): Promise<unknown> {
    return this.repo(tx).update({ id }, { state });
  }

  /** Records a sign-in: the previous current sign-in becomes the last one. */
  async recordSignIn(id: number, at: Date): Promise<void> {
    await this.users
      .createQueryBuilder()
      .update()
      .set({ lastSignInAt: () => 'current_sign_in_at', currentSignInAt: at, signInCount: () => 'sign_in_count + 1' })
      .where('id = :id', { id })
      .execute();
  }

  /** The row, locked for update until the transaction ends. */
  lock(tx: Tx, id: number): Promise<User | null> {
    return tx.getRepository(User).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async delete(tx: Tx, id: number): Promise<void> {
    await tx.getRepository(User).delete({ id });
  }

  /**
   * Serialises changes that can remove an administrator, so that two admins cannot remove each other
   * concurrently. Taken before any other lock of the transaction (email locks, row locks).
   */
  async lockAdmins(tx: Tx): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('users:last-admin'))`);
  }

  /** Active administrators other than `id`. */
  async otherActiveAdmins(tx: Tx, id: number): Promise<number> {
    const rows: { n: number }[] = await tx.query(`SELECT count(*)::int AS n FROM users WHERE admin AND state = 'active' AND id <> $1`, [id]);
    return rows[0].n;
  }

  /** Serialises claims on one email address for the rest of the transaction. */
  async lockEmail(tx: Tx, email: string): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('email:' || lower($1)))`, [email]);
  }

  /** Whether an address is some user's primary (other than `selfId`'s) or any secondary email, case-insensitively. */
  async emailTaken(tx: Tx, email: string, selfId: number | null = null): Promise<boolean> {
    const rows: { n: number }[] = await tx.query(
      `SELECT count(*)::int AS n FROM (
         SELECT id FROM users WHERE lower(email) = lower($1) AND id IS DISTINCT FROM $2
         UNION ALL SELECT id FROM emails WHERE lower(email) = lower($1)) t`,
      [email, selfId],
    );
    return rows[0].n > 0;
  }

  async addIdentity(tx: Tx, userId: number, provider: string, externUid: string): Promise<void> {
    await tx.getRepository(Identity).insert({ userId, provider, externUid });
  }

  /** Links the user to `provider` with `externUid`, replacing its previous uid at that provider. */
  async setIdentity(tx: Tx, userId: number, provider: string, externUid: string): Promise<void> {
    await tx
      .createQueryBuilder()
      .insert()
      .into(Identity)
      .values({ userId, provider, externUid })
      .orUpdate(['extern_uid', 'updated_at'], ['user_id', 'provider'])
      .execute();
  }

  /**
   * byLogin for a password sign-in, with whether the account signs in through a directory (an
   * identity whose provider is `ldap…`, GitLab's `ldap_user?`), in the same statement.
   */
  async byLoginForSignIn(login: string): Promise<{ user: User; ldap: boolean } | null> {
    const rows: (User & { ldapUser: boolean })[] = await this.users.manager.query(
      `SELECT ${this.columns}, EXISTS (SELECT 1 FROM identities i WHERE i.user_id = u.id AND i.provider LIKE 'ldap%') AS "ldapUser"
       FROM users u WHERE lower(u.username) = lower($1) OR lower(u.email) = lower($1) ORDER BY u.id ASC LIMIT 1`,
      [login],
    );
    if (!rows[0]) return null;
    const { ldapUser, ...user } = rows[0];
    return { user: user, ldap: ldapUser };
  }

  /** The user linked to `provider` with `externUid` (a DN: compared case-insensitively). */
  async byIdentity(provider: string, externUid: string): Promise<User | null> {
    const rows = await this.lean(
      `u.id = (SELECT i.user_id FROM identities i WHERE i.provider = $1 AND lower(i.extern_uid) = lower($2) ORDER BY i.id LIMIT 1)`,
      [provider, externUid],
    );
    return rows[0] ?? null;
  }

  /** A page of `provider`'s identities after identity id `afterId` (keyset), with their users' states. */
  identitiesPage(provider: string, afterId: number, limit: number): Promise<{ id: number; userId: number; externUid: string; state: UserState }[]> {
    return this.users.manager.query(
      `SELECT i.id, i.user_id AS "userId", i.extern_uid AS "externUid", u.state
       FROM identities i JOIN users u ON u.id = i.user_id
       WHERE i.provider = $1 AND i.id > $2 ORDER BY i.id LIMIT $3`,
      [provider, afterId, limit],
    );
  }

  /** Moves the users among `ids` that are in state `from` to `to`, in one statement; the ids moved. */
  async moveState(ids: number[], from: UserState, to: UserState): Promise<number[]> {
    if (ids.length === 0) return [];
    // the pg driver answers an UPDATE with [rows, count]
    const [rows]: [{ id: number }[], number] = await this.users.manager.query(
      `UPDATE users SET state = $3, updated_at = now() WHERE id = ANY($1) AND state = $2 RETURNING id`,
      [ids, from, to],
    );
    return rows.map((r) => r.id);
  }
}
