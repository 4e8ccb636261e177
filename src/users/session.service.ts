import { Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { LoginThrottle } from '../throttle/login-throttle';
import { SecretsService } from '../common/crypto/secrets.service';
import { lookupText } from '../common/dto/fields';
import { Forbidden, MissingAttribute, Unauthorized } from '../common/errors/domain-errors';
import { SignInDto } from './dto/user.dto';
import { UserViews } from './user-views.service';
import { User } from './user.entity';
import { UserView } from './users.presenter';
import { UsersRepository } from './users.repository';

/**
 * A directory that checks credentials (src/ldap registers one when LDAP servers are configured):
 * the signed-in user (created or updated from the directory, active), or null for a refusal. Never
 * throws for a directory that does not answer (a refusal then, logged by the directory).
 */
export interface DirectorySignIn {
  signIn(login: string, password: string): Promise<User | null>;
}

/** Password sign-in, shared by `POST /session`, the OAuth password grant and git over HTTP. */
@Injectable()
export class SessionService {
  private directory?: DirectorySignIn;
  constructor(
    private readonly users: UsersRepository,
    private readonly views: UserViews,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    private readonly throttle: LoginThrottle,
  ) {}

  /**
   * `POST /session`: `email` (if given) or `login`, then `password`, each `"x" not given` when missing;
   * 201 with the user's own view and private token.
   */
  async create(dto: SignInDto, ip: string): Promise<UserView> {
    const login = dto.email ?? dto.login;
    if (login === undefined || (dto.email === undefined && login.trim() === '')) throw new MissingAttribute('login');
    if (dto.password === undefined || dto.password.trim() === '') throw new MissingAttribute('password');
    return this.views.login(await this.signIn(login, dto.password, ip));
  }

  /** Lets LDAP sign-in take part (src/ldap, at start-up). */
  useDirectory(directory: DirectorySignIn): void {
    this.directory = directory;
  }

  /**
   * Checks a username-or-email (case-insensitive) and password. Failures count towards the
   * per-IP-and-login throttle; blocked users and a wrong password look the same (401).
   */
  async signIn(login: string, password: string, ip: string, onFailure: () => Error = () => new Unauthorized()): Promise<User> {
    if (!(await this.settings.get()).signinEnabled) throw new Forbidden('Password sign-in is disabled');
    const found = await this.users.byLoginForSignIn(lookupText(login.trim()));
    const user = found?.user ?? null;
    // Count failures per account too, so that username and email do not give two budgets.
    const keys = user ? [login, `user:${user.id}`] : [login];
    await this.throttle.reserve(ip, ...keys);
    // GitLab's rule: no local account of that login, or an LDAP one → the directory decides (an LDAP
    // user's local password is never used, even with LDAP switched off); a local account → its password
    const viaDirectory = !found || found.ldap;
    let signedIn: User | null;
    if (!viaDirectory) {
      const ok = await this.secrets.verifyPassword(password, user?.encryptedPassword);
      signedIn = ok && user?.state === 'active' ? user : null;
    } else {
      // an unknown login costs a hash as well, so that timing does not tell which logins exist
      if (!this.directory) await this.secrets.verifyPassword(password, undefined);
      signedIn = this.directory ? await this.directory.signIn(login.trim(), password) : null;
      // the directory's entry for this login is another account than the local one it names
      if (signedIn && user && signedIn.id !== user.id) signedIn = null;
    }
    if (!signedIn || signedIn.state !== 'active') {
      await this.throttle.failed(ip, ...keys);
      throw onFailure();
    }
    await this.throttle.succeeded(ip, ...keys);
    const now = new Date();
    await this.users.recordSignIn(signedIn.id, now);
    signedIn.lastSignInAt = signedIn.currentSignInAt;
    signedIn.currentSignInAt = now;
    signedIn.signInCount += 1;
    return signedIn;
  }
}
