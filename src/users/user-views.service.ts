import { Inject, Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { APP_CONFIG, AppConfig } from '../config/config';
import { User } from './user.entity';
import { PresentContext, UserView } from './users.presenter';
import { UsersRepository } from './users.repository';
import type { Caller } from '../common/caller/caller';

/**
 * Chooses how much of a user a viewer sees and loads what that view needs (one query for any number
 * of full views; the settings are cached): the disclosure rules of GitLab 8's users API.
 */
@Injectable()
export class UserViews {
  constructor(
    private readonly users: UsersRepository,
    private readonly settings: ApplicationSettingsService,
    private readonly secrets: SecretsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async context(): Promise<PresentContext> {
    const s = await this.settings.get();
    return { externalUrl: this.config.externalUrl, gravatarEnabled: s.gravatarEnabled };
  }

  /** Whether the user may still create a project in its own namespace (needs the full view's data). */
  private canCreateProject(user: User): boolean {
    return user.projectsLimit > (user.personalProjectCount ?? 0);
  }

  /** UserFull views (administrators); identities and project counts loaded unless the rows carry them. */
  async full(users: User[]): Promise<UserView[]> {
    const [ctx] = await Promise.all([this.context(), this.users.loadFullView(users)]);
    return users.map((user) => ({ level: 'full', user, ctx, canCreateProject: this.canCreateProject(user) }));
  }

  async oneFull(user: User): Promise<UserView> {
    return (await this.full([user]))[0];
  }

  /** The full view of a user that no longer exists (a deletion's answer): nothing left to load. */
  async deleted(user: User): Promise<UserView> {
    user.identities = [];
    user.personalProjectCount = 0;
    return this.oneFull(user);
  }

  /** UserLogin: the current user's own view, with its private token. */
  async login(user: User): Promise<UserView> {
    const [ctx] = await Promise.all([this.context(), this.users.loadFullView([user])]);
    const privateToken = this.secrets.decrypt(user.privateTokenEncrypted);
    return { level: 'login', user, ctx, canCreateProject: this.canCreateProject(user), privateToken };
  }

  /** `GET /users/:id`: administrators get UserFull, others User. */
  async forViewer(viewer: Caller, user: User): Promise<UserView> {
    if (viewer.admin) return this.oneFull(user);
    return { level: 'public', user, ctx: await this.context() };
  }

  /** `GET /users`: administrators get UserFull (the list query brought its data), others UserBasic. */
  async list(viewer: Caller, users: User[]): Promise<UserView[]> {
    if (viewer.admin) return this.full(users);
    const ctx = await this.context();
    return users.map((user) => ({ level: 'basic', user, ctx }));
  }
}
