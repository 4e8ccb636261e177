import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Conflict, InvalidAttribute, ValidationFailed } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { APP_CONFIG, AppConfig } from '../config/config';
import { LdapServerConfig } from '../config/ldap-config';
import { ldapUnavailable } from '../metrics/registry';
import { DirectorySignIn, SessionService } from '../users/session.service';
import { User } from '../users/user.entity';
import { UserDirectory } from '../users/user-directory.service';
import { UsersService } from '../users/users.service';
import { DirectoryUnavailable, LdapConnection, LdapPerson } from './ldap-directory';

/**
 * LDAP sign-in (GitLab's Gitlab::LDAP::Authentication + Access + User): the entry the login names
 * under the base and filter, a bind as its DN with the password, then the account linked to that
 * DN — created on the first sign-in (identity `provider` + DN, the directory's email and name),
 * updated on later ones, and checked as the synchronisation checks it (a disabled AD account is
 * `ldap_blocked`, an entry that is back makes an `ldap_blocked` user active again).
 */
@Injectable()
export class LdapService implements OnModuleInit, DirectorySignIn {
  readonly servers: LdapServerConfig[];

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly session: SessionService,
    private readonly users: UserDirectory,
    private readonly usersService: UsersService,
    private readonly logger: Logger,
  ) {
    this.servers = config.ldap.servers;
  }

  onModuleInit(): void {
    if (this.servers.length) this.session.useDirectory(this);
  }

  /** Tries each server in turn (GitLab's order); the first that accepts the credentials decides. */
  async signIn(login: string, password: string): Promise<User | null> {
    if (password === '' || login === '') return null;
    for (const server of this.servers) {
      let conn: LdapConnection | undefined;
      try {
        conn = await LdapConnection.open(server);
        const person = await conn.findByLogin(login);
        if (!person || !(await conn.verifyPassword(person.dn, password))) continue;
        return await this.accountFor(server, person);
      } catch (e) {
        if (!(e instanceof DirectoryUnavailable)) throw e;
        this.unavailable(e, 'signin');
      } finally {
        await conn?.close();
      }
    }
    return null;
  }

  /** Logs and counts a directory that did not answer (never a reason to block anybody). */
  unavailable(e: DirectoryUnavailable, operation: 'signin' | 'sync'): void {
    ldapUnavailable(e.provider, operation);
    this.logger.warn('LDAP server unavailable', { provider: e.provider, operation, error: e.message });
  }

  /** The account linked to the entry, created or brought up to date; null when it may not sign in. */
  private async accountFor(server: LdapServerConfig, person: LdapPerson): Promise<User | null> {
    let user = await this.users.byIdentity(server.provider, person.dn);
    if (!user) return this.create(server, person);
    if (person.disabled) {
      await this.users.moveState([user.id], 'active', 'ldap_blocked');
      return null;
    }
    if (user.state === 'ldap_blocked') {
      await this.users.moveState([user.id], 'ldap_blocked', 'active');
      user = { ...user, state: 'active' };
    }
    return this.refresh(user, person);
  }

  /** Email and name follow the directory (an email another account holds stays as it was). */
  private async refresh(user: User, person: LdapPerson): Promise<User> {
    const changes: Partial<User> = {};
    if (person.name && person.name !== user.name) changes.name = person.name;
    const email = person.email?.trim();
    if (email && email.toLowerCase() !== user.email.toLowerCase()) {
      const free = await this.users.claimEmail(user.id, email);
      if (free) changes.email = email;
      else this.logger.warn('LDAP sign-in: the directory email belongs to another account; kept the old one', { userId: user.id });
    }
    if (changes.name) await this.users.setName(user.id, changes.name);
    return { ...user, ...changes };
  }

  /**
   * First sign-in: a new account linked to the DN. A username or email that a local account already
   * holds refuses the sign-in (an administrator links such accounts with provider + extern_uid):
   * a directory never takes over a local account.
   */
  private async create(server: LdapServerConfig, person: LdapPerson): Promise<User | null> {
    if (person.disabled) return null;
    const username = person.username?.trim();
    const email = person.email?.trim();
    if (!username || !email) {
      this.logger.warn('LDAP sign-in refused: the entry has no username or email attribute', { provider: server.provider, dn: person.dn });
      return null;
    }
    try {
      await this.usersService.create({
        username,
        email,
        name: person.name?.trim() || username,
        password: randomBytes(24).toString('base64url'),
        provider: server.provider,
        extern_uid: person.dn,
      });
    } catch (e) {
      if (!(e instanceof Conflict || e instanceof ValidationFailed || e instanceof InvalidAttribute)) throw e;
      // the same entry's first sign-in running concurrently created the account: that one is it
      const created = await this.users.byIdentity(server.provider, person.dn);
      if (created) return this.accountFor(server, person);
      this.logger.warn(
        "LDAP sign-in refused: a local account holds this username or email (link it with provider and extern_uid), or the directory's values are not valid here",
        {
          provider: server.provider,
          dn: person.dn,
          reason: e.message,
        },
      );
      return null;
    }
    const user = await this.users.byIdentity(server.provider, person.dn);
    if (user && server.blockAutoCreatedUsers) {
      await this.users.setState(user.id, 'blocked');
      return null;
    }
    return user;
  }
}
