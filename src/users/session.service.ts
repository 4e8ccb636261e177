import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { LoginThrottle } from '../common/auth/login-throttle';
import { SecretsService } from '../common/crypto/secrets.service';
import { Forbidden, Unauthorized } from '../common/errors/domain-errors';
import { User } from './user.entity';

/** Password sign-in, shared by `POST /session` and the OAuth password grant. */
@Injectable()
export class SessionService {
  constructor(
    private readonly ds: DataSource,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    private readonly throttle: LoginThrottle,
  ) {}

  /**
   * Checks a username-or-email (case-insensitive) and password. Failures count towards the
   * per-IP-and-login throttle; blocked users and a wrong password look the same (401).
   */
  async signIn(login: string, password: string, ip: string, onFailure: () => Error = () => new Unauthorized()): Promise<User> {
    if (!(await this.settings.get()).signinEnabled) throw new Forbidden('Password sign-in is disabled');
    this.throttle.check(ip, login);
    const user = await this.ds
      .getRepository(User)
      .createQueryBuilder('u')
      .where('lower(u.username) = lower(:l) OR lower(u.email) = lower(:l)', { l: login.trim() })
      .orderBy('u.id', 'ASC')
      .getOne();
    // Count failures per account too, so that username and email do not give two budgets.
    const account = user ? `user:${user.id}` : login;
    if (user) this.throttle.check(ip, account);
    const ok = await this.secrets.verifyPassword(password, user?.encryptedPassword);
    if (!ok || !user || user.state !== 'active') {
      this.throttle.failed(ip, login);
      if (user) this.throttle.failed(ip, account);
      throw onFailure();
    }
    this.throttle.succeeded(ip, login);
    this.throttle.succeeded(ip, account);
    const now = new Date();
    await this.ds
      .getRepository(User)
      .createQueryBuilder()
      .update()
      .set({
        lastSignInAt: () => 'current_sign_in_at',
        currentSignInAt: now,
        signInCount: () => 'sign_in_count + 1',
      })
      .where('id = :id', { id: user.id })
      .execute();
    user.lastSignInAt = user.currentSignInAt;
    user.currentSignInAt = now;
    user.signInCount += 1;
    return user;
  }
}
