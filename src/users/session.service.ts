import { Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { LoginThrottle } from '../common/auth/login-throttle';
import { SecretsService } from '../common/crypto/secrets.service';
import { lookupText } from '../common/dto/fields';
import { Forbidden, MissingAttribute, Unauthorized } from '../common/errors/domain-errors';
import { SignInDto } from './dto/user.dto';
import { UserViews } from './user-views.service';
import { User } from './user.entity';
import { UserView } from './users.presenter';
import { UsersRepository } from './users.repository';

/** Password sign-in, shared by `POST /session`, the OAuth password grant and git over HTTP. */
@Injectable()
export class SessionService {
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

  /**
   * Checks a username-or-email (case-insensitive) and password. Failures count towards the
   * per-IP-and-login throttle; blocked users and a wrong password look the same (401).
   */
  async signIn(login: string, password: string, ip: string, onFailure: () => Error = () => new Unauthorized()): Promise<User> {
    if (!(await this.settings.get()).signinEnabled) throw new Forbidden('Password sign-in is disabled');
    const user = await this.users.byLogin(lookupText(login.trim()));
    // Count failures per account too, so that username and email do not give two budgets.
    const keys = user ? [login, `user:${user.id}`] : [login];
    await this.throttle.reserve(ip, ...keys);
    const ok = await this.secrets.verifyPassword(password, user?.encryptedPassword);
    if (!ok || !user || user.state !== 'active') {
      await this.throttle.failed(ip, ...keys);
      throw onFailure();
    }
    await this.throttle.succeeded(ip, ...keys);
    const now = new Date();
    await this.users.recordSignIn(user.id, now);
    user.lastSignInAt = user.currentSignInAt;
    user.currentSignInAt = now;
    user.signInCount += 1;
    return user;
  }
}
