import { Injectable } from '@nestjs/common';
import { DomainEvents, userSnapshot } from '../domain-events/domain-events';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { lookupText } from '../common/dto/fields';
import { Conflict, Forbidden, isUniqueViolation, NotFound } from '../common/errors/domain-errors';
import { Paginated, pageRequest, paginateAll } from '../common/pagination/pagination';
import { containsPattern } from '../common/params/params';
import { Transactions, Tx } from '../database/transactions';
import { GitService } from '../git/git.service';
import { NamespacesService } from '../namespaces/namespaces.service';
import { ProjectRecordsService } from '../projects/project-records.service';
import { CreateUserDto, ListUsersDto, UpdateUserDto } from './dto/user.dto';
import { checkUserAttributes, UserAttributes } from './dto/user-rules';
import { UserViews } from './user-views.service';
import { User } from './user.entity';
import { UserView } from './users.presenter';
import { UsersRepository } from './users.repository';
import { EmailsRepository } from './emails.repository';

type Taken = 'Email' | 'Username';

/** Maps a unique-index violation to the attribute it guards. */
function takenField(e: unknown): Taken | undefined {
  if (isUniqueViolation(e, 'users_email_key') || isUniqueViolation(e, 'emails_email_key')) return 'Email';
  if (isUniqueViolation(e, 'users_username_key') || isUniqueViolation(e, 'namespaces_path_key')) return 'Username';
  return undefined;
}

/** The profile attributes an update copies as they are. */
const COPIED = [
  'email',
  'username',
  'name',
  'skype',
  'linkedin',
  'twitter',
  'websiteUrl',
  'bio',
  'location',
  'projectsLimit',
  'admin',
  'canCreateGroup',
  'external',
] as const;

/**
 * Users: the list and profiles (disclosure by viewer, see UserViews), and the administrator's
 * create, update, delete, block and unblock. The routes' `@Admin()` keeps others out; the rules that
 * protect the instance (the last administrator stays, LDAP-blocked users are LDAP's) live here.
 */
@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly namespaces: NamespacesService,
    private readonly views: UserViews,
    private readonly tx: Transactions,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    private readonly git: GitService,
    private readonly domainEvents: DomainEvents,
    private readonly projectRecords: ProjectRecordsService,
    private readonly emails: EmailsRepository,
  ) {}

  /**
   * `GET /users`: `username` (exact, at most one; a page of it, with the headers every list carries), `search` (username, name, and email —
   * by substring for administrators, by the whole address for others), `active`/`blocked`.
   * Administrators get full views (their data comes in the same query), others summaries.
   */
  async list(viewer: User, q: ListUsersDto): Promise<Paginated<UserView>> {
    if (q.username !== undefined) {
      const found = await this.users.byUsername(lookupText(q.username.trim()), { fullView: viewer.admin });
      return paginateAll(await this.views.list(viewer, found), q, { whole: true });
    }
    const page = pageRequest(q);
    const search = q.search === undefined ? undefined : lookupText(q.search.trim());
    const pattern = search ? containsPattern(search) : undefined;
    const [rows, total] = await this.users.page(
      {
        pattern,
        email: pattern === undefined ? undefined : viewer.admin ? { pattern } : { exact: (search as string).toLowerCase() },
        active: q.active,
        blocked: q.blocked,
      },
      page,
      { fullView: viewer.admin },
    );
    return new Paginated(await this.views.list(viewer, rows), total, page);
  }

  /** `GET /users/:id`: administrators get the full view, others the public profile. */
  async show(viewer: User, id: number): Promise<UserView> {
    return this.views.forViewer(viewer, await this.findById(id));
  }

  /** `GET /user`: the caller's own view, with its private token. */
  me(user: User): Promise<UserView> {
    return this.views.login(user);
  }

  /** A user by id, or `404 <resource> Not Found`. */
  async findById(id: number, resource = 'User'): Promise<User> {
    const user = await this.users.byId(id);
    if (!user) throw new NotFound(resource);
    return user;
  }

  /** `POST /users` (admin): 409 for a taken email or username, 400 for invalid fields. */
  async create(dto: CreateUserDto): Promise<UserView> {
    const attrs = checkUserAttributes(dto);
    const settings = await this.settings.get();
    const token = this.secrets.generateToken();
    const encryptedPassword = await this.secrets.hashPassword(dto.password);
    let user: User;
    try {
      user = await this.tx.run(async (tx) => {
        await this.assertAvailable(tx, attrs, null, (f) => new Conflict(`${f} has already been taken`));
        const created = await this.users.insert(tx, {
          username: dto.username,
          email: dto.email,
          name: dto.name,
          encryptedPassword,
          state: 'active',
          admin: attrs.admin ?? false,
          // External users (GitLab 8.x) may not create projects or groups of their own.
          projectsLimit: attrs.external ? 0 : (attrs.projectsLimit ?? settings.defaultProjectsLimit),
          canCreateGroup: attrs.external ? false : (attrs.canCreateGroup ?? true),
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
          confirmedAt: attrs.confirm === true ? null : new Date(), // 8.17: skip_confirmation! unless confirm
          privateTokenDigest: this.secrets.digest(token),
          privateTokenEncrypted: this.secrets.encrypt(token),
        });
        // in the transaction: a later failure (a taken identity below) rolls it back with the user
        await this.domainEvents.emit(tx, 'user.created', { user: userSnapshot(created) }); // system hooks
        await this.namespaces.insertPersonal(tx, created.id, created.username);
        if (attrs.provider && attrs.externUid) await this.users.addIdentity(tx, created.id, attrs.provider, attrs.externUid);
        return created;
      });
    } catch (e) {
      const f = takenField(e);
      if (f) throw new Conflict(`${f} has already been taken`);
      if (isUniqueViolation(e, 'identities_provider_uid_key')) throw new Conflict('Extern uid has already been taken');
      throw e;
    }
    return this.views.oneFull(user);
  }

  /**
   * `PUT /users/:id` (admin). A taken email or username answers 404 as the spec says
   * ("404 even where 409 would fit"), with the reason in the message.
   */
  async update(id: number, dto: UpdateUserDto): Promise<UserView> {
    const existing = await this.findById(id);
    const attrs = checkUserAttributes(dto);
    const taken = (f: Taken) => new NotFound(undefined, ` - ${f} has already been taken`);
    const encryptedPassword = attrs.password ? await this.secrets.hashPassword(attrs.password) : undefined;
    try {
      await this.tx.run(async (tx) => {
        if (attrs.admin === false && existing.admin) await this.assertOtherAdmin(tx, existing.id, 'demoted');
        const newEmail = attrs.email !== undefined && attrs.email !== existing.email;
        // 8.17's update_emails_with_primary_email: one of the user's own secondary addresses may become
        // the primary one; that secondary row goes and the old primary address becomes a secondary one
        const swapped = newEmail ? await this.emails.findOwnByAddress(tx, existing.id, attrs.email!) : null;
        if (swapped) await this.emails.delete(tx, swapped.id);
        await this.assertAvailable(tx, attrs, existing.id, taken);
        const changes: Partial<User> = {};
        for (const key of COPIED) {
          if (attrs[key] !== undefined) (changes as Record<string, unknown>)[key] = attrs[key];
        }
        if (encryptedPassword) changes.encryptedPassword = encryptedPassword;
        if (changes.external ?? (existing.external && changes.external !== false)) {
          changes.projectsLimit = 0;
          changes.canCreateGroup = false;
        }
        await this.users.update(existing.id, changes, tx);
        if (swapped) await this.emails.insert(tx, { userId: existing.id, email: existing.email });
        // the notification email, if it was the old primary address, follows the new one (8.17's set_notification_email)
        if (newEmail) await this.domainEvents.emit(tx, 'user.emails_changed', { userId: existing.id, removed: [existing.email] });
        if (attrs.username && attrs.username !== existing.username) {
          await this.namespaces.renamePersonal(tx, existing.id, attrs.username);
        }
        if (attrs.provider && attrs.externUid) await this.users.setIdentity(tx, existing.id, attrs.provider, attrs.externUid);
      });
    } catch (e) {
      const f = takenField(e);
      if (f) throw taken(f);
      if (isUniqueViolation(e, 'identities_provider_uid_key')) throw new NotFound(undefined, ' - Extern uid has already been taken');
      throw e;
    }
    return this.views.oneFull(await this.findById(existing.id));
  }

  /**
   * Email and username are unique across users, secondary emails and group paths. An advisory
   * lock per address serialises concurrent claims (two tables cannot share one unique index).
   */
  private async assertAvailable(tx: Tx, attrs: Pick<UserAttributes, 'email' | 'username'>, selfId: number | null, error: (f: Taken) => Error): Promise<void> {
    if (attrs.email !== undefined) {
      await this.users.lockEmail(tx, attrs.email);
      if (await this.users.emailTaken(tx, attrs.email, selfId)) throw error('Email');
    }
    if (attrs.username !== undefined && (await this.namespaces.pathTaken(tx, attrs.username, selfId))) throw error('Username');
  }

  /**
   * `DELETE /users/:id`: the deleted user, or undefined when absent. The user's personal projects go
   * with it (rows in the transaction, repositories after commit). The last administrator stays.
   */
  async remove(id: number): Promise<UserView | undefined> {
    const result = await this.tx.run(async (tx) => {
      await this.users.lockAdmins(tx); // before the row lock, in the same order as update and block
      const user = await this.users.lock(tx, id);
      if (!user) return undefined;
      if (user.admin) await this.assertOtherAdmin(tx, id, 'deleted');
      const projectIds = await this.projectRecords.removePersonal(tx, id); // the projects' rows first, then their namespace
      await this.namespaces.removePersonal(tx, id);
      await this.users.delete(tx, id);
      await this.domainEvents.emit(tx, 'user.destroyed', { user: userSnapshot(user) }); // system hooks (the row is gone)
      return { user, projectIds };
    });
    if (!result) return undefined;
    await Promise.all(result.projectIds.map((pid) => this.git.remove(pid)));
    return this.views.deleted(result.user);
  }

  async block(id: number): Promise<true> {
    const user = await this.findById(id);
    if (user.state === 'ldap_blocked') throw new Forbidden('LDAP blocked users cannot be modified by the API');
    await this.tx.run(async (tx) => {
      if (user.admin) await this.assertOtherAdmin(tx, user.id, 'blocked');
      await this.users.setState(user.id, 'blocked', tx);
    });
    return true;
  }

  async unblock(id: number): Promise<true> {
    const user = await this.findById(id);
    if (user.state === 'ldap_blocked') throw new Forbidden('LDAP blocked users cannot be unblocked by the API');
    await this.users.setState(user.id, 'active');
    return true;
  }

  /** Refuses (403) to delete, demote or block `id` when no other active administrator would remain. */
  private async assertOtherAdmin(tx: Tx, id: number, action: 'deleted' | 'demoted' | 'blocked'): Promise<void> {
    await this.users.lockAdmins(tx);
    if ((await this.users.otherActiveAdmins(tx, id)) === 0) throw new Forbidden(`the last administrator cannot be ${action}`);
  }
}
