import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { Conflict, Forbidden, isUniqueViolation, NotFound } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern, Params, parseId } from '../common/params/params';
import { APP_CONFIG, AppConfig } from '../config/config';
import { DomainEvents } from '../events/domain-events';
import { GitService } from '../git/git.service';
import { Namespace } from '../namespaces/namespace.entity';
import { Identity } from './identity.entity';
import { readUserAttributes, UserAttributes } from './user-attributes';
import { mapFullViewColumns, mapUserRow, USER_COLUMNS, USER_FULL_VIEW_COLUMNS, UserRow } from './user-rows';
import { User } from './user.entity';
import { PresentContext } from './users.presenter';

type Taken = 'Email' | 'Username';

/** Maps a unique-index violation to the attribute it guards. */
function takenField(e: unknown): Taken | undefined {
  if (isUniqueViolation(e, 'users_email_key') || isUniqueViolation(e, 'emails_email_key')) return 'Email';
  if (isUniqueViolation(e, 'users_username_key') || isUniqueViolation(e, 'namespaces_path_key')) return 'Username';
  return undefined;
}

@Injectable()
export class UsersService {
  constructor(
    private readonly ds: DataSource,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly git: GitService,
    private readonly domainEvents: DomainEvents,
  ) {}

  async presentContext(): Promise<PresentContext> {
    const s = await this.settings.get();
    return { externalUrl: this.config.externalUrl, gravatarEnabled: s.gravatarEnabled };
  }

  /** Whether the user may still create a project in its own namespace (needs `loadFullView`). */
  canCreateProject(user: User): boolean {
    return user.projectsLimit > (user.personalProjectCount ?? 0);
  }

  /** Loads what the full view needs — `identities` and personal project counts — in one query. */
  async loadFullView(users: User[]): Promise<User[]> {
    if (users.length === 0) return users;
    const rows: UserRow[] = await this.ds.query(`SELECT u.id, ${USER_FULL_VIEW_COLUMNS} FROM users u WHERE u.id = ANY($1)`, [
      users.map((u) => u.id),
    ]);
    const byId = new Map(rows.map((r) => [r.id as number, r]));
    for (const u of users) {
      const extra = mapFullViewColumns(byId.get(u.id) ?? {}, u.id);
      u.identities = extra.identities;
      u.personalProjectCount = extra.personalProjectCount;
    }
    return users;
  }


  privateToken(user: User): string {
    return this.secrets.decrypt(user.privateTokenEncrypted);
  }

  /**
   * `GET /users`: `username` (exact, at most one, unpaginated), `search` (username, name, and email —
   * by substring for administrators, by the whole address for others), `active`/`blocked`.
   */
  async list(viewer: User, p: Params): Promise<User[] | Paginated<User>> {
    const full = viewer.admin ? `, ${USER_FULL_VIEW_COLUMNS}` : '';
    const username = p.string('username');
    if (username !== undefined) {
      const rows: UserRow[] = await this.ds.query(
        `SELECT ${USER_COLUMNS}${full} FROM users u WHERE lower(u.username) = lower($1)`,
        [username.trim()],
      );
      return rows.map(mapUserRow);
    }
    const page = pageRequest(p);
    const where: string[] = [];
    const args: unknown[] = [];
    const search = p.string('search')?.trim();
    if (search) {
      args.push(containsPattern(search));
      if (!viewer.admin) args.push(search.toLowerCase());
      const emailMatch = viewer.admin ? 'lower(u.email) LIKE $1' : 'lower(u.email) = $2';
      where.push(`(lower(u.username) LIKE $1 OR lower(u.name) LIKE $1 OR ${emailMatch})`);
    }
    if (p.bool('active')) where.push(`u.state = 'active'`);
    if (p.bool('blocked')) where.push(`u.state IN ('blocked', 'ldap_blocked')`);
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    // One round trip: the page, its total (window count) and, for administrators, identities and
    // project counts. Only a page past the end needs a separate count.
    const rows: UserRow[] = await this.ds.query(
      `SELECT ${USER_COLUMNS}${full}, count(*) OVER() AS total_count FROM users u ${filter}
        ORDER BY u.id DESC LIMIT ${page.perPage} OFFSET ${page.offset}`,
      args,
    );
    let total = rows.length ? Number(rows[0].total_count) : 0;
    if (!rows.length && page.offset > 0) {
      const c: { n: number }[] = await this.ds.query(`SELECT count(*)::int AS n FROM users u ${filter}`, args);
      total = c[0].n;
    }
    return new Paginated(rows.map(mapUserRow), total, page);
  }


  async findById(rawId: string | number, resource = 'User'): Promise<User> {
    const id = typeof rawId === 'number' ? rawId : parseId(rawId);
    const user = id === undefined ? null : await this.ds.getRepository(User).findOne({ where: { id } });
    if (!user) throw new NotFound(resource);
    return user;
  }

  /** `POST /users` (admin): 409 for a taken email or username, 400 for invalid fields. */
  async create(p: Params): Promise<User> {
    const attrs = readUserAttributes(p, 'create');
    const settings = await this.settings.get();
    const token = this.secrets.generateToken();
    const encryptedPassword = await this.secrets.hashPassword(attrs.password as string);
    try {
      const created = await this.ds.transaction(async (m) => {
        await this.assertAvailable(m, attrs, undefined, (f) => new Conflict(`${f} has already been taken`));
        const repo = m.getRepository(User);
        const user = await repo.save(
          repo.create({
            username: attrs.username,
            email: attrs.email,
            name: attrs.name,
            encryptedPassword,
            state: 'active',
            admin: attrs.admin ?? false,
            // External users (GitLab 8.x) may not create projects or groups of their own.
            projectsLimit: attrs.external ? 0 : attrs.projectsLimit ?? settings.defaultProjectsLimit,
            canCreateGroup: attrs.external ? false : attrs.canCreateGroup ?? true,
            external: attrs.external ?? false,
            bio: attrs.bio ?? null,
            location: attrs.location ?? null,
            skype: attrs.skype ?? '',
            linkedin: attrs.linkedin ?? '',
            twitter: attrs.twitter ?? '',
            websiteUrl: attrs.websiteUrl ?? '',
            themeId: 2,
            colorSchemeId: 1,
            twoFactorEnabled: false,
            signInCount: 0,
            confirmedAt: attrs.confirm === false ? null : new Date(),
            privateTokenDigest: this.secrets.digest(token),
            privateTokenEncrypted: this.secrets.encrypt(token),
          }),
        );
        await m.getRepository(Namespace).insert({
          name: user.username,
          path: user.username,
          kind: 'user',
          ownerId: user.id,
          description: '',
          visibilityLevel: 20,
        });
        if (attrs.provider && attrs.externUid) {
          await m.getRepository(Identity).insert({ userId: user.id, provider: attrs.provider, externUid: attrs.externUid });
        }
        return user;
      });
      this.domainEvents.emit('user.created', { user: created }); // system hooks
      return created;
    } catch (e) {
      const f = takenField(e);
      if (f) throw new Conflict(`${f} has already been taken`);
      if (isUniqueViolation(e, 'identities_provider_uid_key')) throw new Conflict('Extern uid has already been taken');
      throw e;
    }
  }

  /**
   * `PUT /users/:id` (admin). A taken email or username answers 404 as the spec says
   * ("404 even where 409 would fit"), with the reason in the message.
   */
  async update(rawId: string, p: Params): Promise<User> {
    const existing = await this.findById(rawId);
    const attrs = readUserAttributes(p, 'update');
    const taken = (f: Taken) => new NotFound(undefined, ` - ${f} has already been taken`);
    const encryptedPassword = attrs.password ? await this.secrets.hashPassword(attrs.password) : undefined;
    try {
      await this.ds.transaction(async (m) => {
        if (attrs.admin === false && existing.admin) await assertOtherAdmin(m, existing.id, 'demoted');
        await this.assertAvailable(m, attrs, existing.id, taken);
        const changes: Partial<User> = {};
        for (const key of [
          'email', 'username', 'name', 'skype', 'linkedin', 'twitter', 'websiteUrl', 'bio', 'location',
          'projectsLimit', 'admin', 'canCreateGroup', 'external',
        ] as const) {
          if (attrs[key] !== undefined) (changes as Record<string, unknown>)[key] = attrs[key];
        }
        if (encryptedPassword) changes.encryptedPassword = encryptedPassword;
        if (changes.external ?? (existing.external && changes.external !== false)) {
          changes.projectsLimit = 0;
          changes.canCreateGroup = false;
        }
        if (Object.keys(changes).length) await m.getRepository(User).update({ id: existing.id }, changes);
        if (attrs.username && attrs.username !== existing.username) {
          await m
            .getRepository(Namespace)
            .update({ ownerId: existing.id, kind: 'user' }, { path: attrs.username, name: attrs.username });
        }
        if (attrs.provider && attrs.externUid) {
          await m
            .createQueryBuilder()
            .insert()
            .into(Identity)
            .values({ userId: existing.id, provider: attrs.provider, externUid: attrs.externUid })
            .orUpdate(['extern_uid', 'updated_at'], ['user_id', 'provider'])
            .execute();
        }
      });
    } catch (e) {
      const f = takenField(e);
      if (f) throw taken(f);
      if (isUniqueViolation(e, 'identities_provider_uid_key')) throw new NotFound(undefined, ' - Extern uid has already been taken');
      throw e;
    }
    return this.findById(existing.id);
  }

  /**
   * Email and username are unique across users, secondary emails and group paths. An advisory
   * lock per address serialises concurrent claims (two tables cannot share one unique index).
   */
  async assertAvailable(
    m: EntityManager,
    attrs: Pick<UserAttributes, 'email' | 'username'>,
    selfId: number | undefined,
    error: (f: Taken) => Error,
  ): Promise<void> {
    if (attrs.email !== undefined) {
      await lockEmail(m, attrs.email);
      const rows: { n: number }[] = await m.query(
        `SELECT count(*)::int AS n FROM (
           SELECT id FROM users WHERE lower(email) = lower($1) AND id IS DISTINCT FROM $2
           UNION ALL SELECT id FROM emails WHERE lower(email) = lower($1)) t`,
        [attrs.email, selfId ?? null],
      );
      if (rows[0].n > 0) throw error('Email');
    }
    if (attrs.username !== undefined) {
      const rows: { n: number }[] = await m.query(
        `SELECT count(*)::int AS n FROM namespaces
          WHERE lower(path) = lower($1) AND NOT (kind = 'user' AND owner_id IS NOT DISTINCT FROM $2)`,
        [attrs.username, selfId ?? null],
      );
      if (rows[0].n > 0) throw error('Username');
    }
  }

  /**
   * `DELETE /users/:id`: the deleted user, or undefined when absent. The user's personal projects go
   * with it (rows in the transaction, repositories after commit). The last administrator stays.
   */
  async remove(rawId: string): Promise<User | undefined> {
    const id = parseId(rawId);
    if (id === undefined) return undefined;
    const result = await this.ds.transaction(async (m) => {
      await lockAdmins(m); // before the row lock, in the same order as update and block
      const user = await m.getRepository(User).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
      if (!user) return undefined;
      if (user.admin) await assertOtherAdmin(m, id, 'deleted');
      const projects: { id: number }[] = await m.query(
        `DELETE FROM projects WHERE namespace_id IN (SELECT id FROM namespaces WHERE kind = 'user' AND owner_id = $1) RETURNING id`,
        [id],
      ).then((r: [{ id: number }[], number]) => r[0]);
      await m.query(`DELETE FROM namespaces WHERE kind = 'user' AND owner_id = $1`, [id]);
      await m.getRepository(User).delete({ id });
      return { user, projectIds: projects.map((p) => p.id) };
    });
    if (!result) return undefined;
    await Promise.all(result.projectIds.map((pid) => this.git.remove(pid)));
    this.domainEvents.emit('user.destroyed', { user: result.user }); // system hooks
    return result.user;
  }

  async block(rawId: string): Promise<true> {
    const user = await this.findById(rawId);
    if (user.state === 'ldap_blocked') throw new Forbidden('LDAP blocked users cannot be modified by the API');
    await this.ds.transaction(async (m) => {
      if (user.admin) await assertOtherAdmin(m, user.id, 'blocked');
      await m.getRepository(User).update({ id: user.id }, { state: 'blocked' });
    });
    return true;
  }

  async unblock(rawId: string): Promise<true> {
    const user = await this.findById(rawId);
    if (user.state === 'ldap_blocked') throw new Forbidden('LDAP blocked users cannot be unblocked by the API');
    await this.ds.getRepository(User).update({ id: user.id }, { state: 'active' });
    return true;
  }
}

/**
 * Serialises changes that can remove an administrator, so that two admins cannot remove each other
 * concurrently. Taken before any other lock of the transaction (email locks, row locks).
 */
async function lockAdmins(m: EntityManager): Promise<void> {
  await m.query(`SELECT pg_advisory_xact_lock(hashtext('users:last-admin'))`);
}

/** Refuses (403) to delete, demote or block `id` when no other active administrator would remain. */
async function assertOtherAdmin(m: EntityManager, id: number, action: 'deleted' | 'demoted' | 'blocked'): Promise<void> {
  await lockAdmins(m);
  const admins: { n: number }[] = await m.query(
    `SELECT count(*)::int AS n FROM users WHERE admin AND state = 'active' AND id <> $1`,
    [id],
  );
  if (admins[0].n === 0) throw new Forbidden(`the last administrator cannot be ${action}`);
}

/** Serialises claims on one email address for the rest of the transaction. */
export async function lockEmail(m: EntityManager, email: string): Promise<void> {
  await m.query(`SELECT pg_advisory_xact_lock(hashtext('email:' || lower($1)))`, [email]);
}
