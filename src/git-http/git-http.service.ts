import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthService } from '../common/auth/auth.service';
import { DomainError, NotFound, TooManyRequests } from '../common/errors/domain-errors';
import { ProjectAbility } from '../common/policy/policy';
import { GitService } from '../git/git.service';
import { SmartHttpAction } from '../git/smart-http';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { RepositoryLocks } from '../database/repository-locks';
import { PushService } from '../repository/push.service';
import { SessionService } from '../users/session.service';
import { User } from '../users/user.entity';
import { GitAuthBan } from './git-auth-ban';

export type GitAction = SmartHttpAction;

/** What a CI build token grants: read access to its own project's repository. */
export interface BuildTokenGrant {
  projectId: number;
  user?: User;
}
export type BuildTokenResolver = (token: string) => Promise<BuildTokenGrant | undefined>;

interface Caller {
  user?: User;
  build?: BuildTokenGrant;
}

class GitHttpError extends DomainError {
  constructor(
    readonly status: number,
    private readonly text: string,
    private readonly challenge = false,
  ) {
    super(text);
  }
  body() {
    return { message: this.text };
  }
  override headers(): Record<string, string> {
    return this.challenge ? { 'WWW-Authenticate': 'Basic realm="GitLab"' } : {};
  }
}

const unauthorized = () => new GitHttpError(401, 'HTTP Basic: Access denied', true);

/**
 * Git smart HTTP: authenticates HTTP Basic (password, private token, `oauth2` + OAuth token,
 * `gitlab-ci-token` + build token), authorises with the same policy as the API, then streams.
 */
@Injectable()
export class GitHttpService {
  private buildTokens?: BuildTokenResolver;

  constructor(
    private readonly projects: ProjectResolver,
    private readonly auth: AuthService,
    private readonly session: SessionService,
    private readonly git: GitService,
    private readonly push: PushService,
    private readonly ban: GitAuthBan,
    private readonly locks: RepositoryLocks,
  ) {}

  /** The CI area registers how build tokens resolve (`gitlab-ci-token` clones). */
  registerBuildTokenResolver(resolver: BuildTokenResolver): void {
    this.buildTokens = resolver;
  }

  /** One smart HTTP request: `requested` is the `service` that `info/refs` names. */
  async handle(req: Request, res: Response, namespace: string, repo: string, action: GitAction, requested?: string): Promise<void> {
    const service = action === 'info/refs' ? (requested ?? '') : action;
    if (service !== 'git-upload-pack' && service !== 'git-receive-pack') {
      throw new GitHttpError(403, 'Only the smart HTTP protocol is supported');
    }
    const ip = req.ip ?? '';
    // GitLab 8's Rack::Attack blocklist: a banned IP gets 403 before any credential is looked at
    if (await this.ban.banned(ip)) throw new GitHttpError(403, 'Forbidden');
    let caller: Caller;
    try {
      caller = await this.authenticate(req);
    } catch (e) {
      if (e instanceof GitHttpError || e instanceof TooManyRequests) await this.ban.failed(ip);
      throw e;
    }
    if (caller.user || caller.build) await this.ban.succeeded(ip);
    const path = `${namespace}/${repo.replace(/\.git$/i, '')}`;
    let project: Project;
    let abilities: Set<ProjectAbility>;
    try {
      ({ project, abilities } = await this.resolve(caller, path));
    } catch (e) {
      if (e instanceof NotFound && !caller.user && !caller.build) throw unauthorized();
      throw e;
    }
    const needed: ProjectAbility = service === 'git-receive-pack' ? 'push_code' : 'download_code';
    if (!abilities.has('read_project')) {
      if (!caller.user && !caller.build) throw unauthorized();
      throw new NotFound('Project');
    }
    if (!abilities.has(needed)) {
      if (!caller.user && !caller.build) throw unauthorized();
      throw new GitHttpError(403, service === 'git-receive-pack' ? 'You are not allowed to push code to this project.' : 'You are not allowed to download code from this project.');
    }
    if (!this.git.exists(project.id)) await this.git.create(project.id);
    const pushRules = service === 'git-receive-pack' ? await this.push.rulesFor(project, abilities) : undefined;
    const user = caller.user;
    const serve = () =>
      this.git.serveSmartHttp(project.id, {
        req,
        res,
        action,
        remoteUser: caller.user?.username ?? 'anonymous',
        pushRules,
        onUpdates: user ? (updates) => this.push.afterPush(project, user, updates) : undefined,
      });
    // a push is a repository write: serialised per repository across instances (fetches are not)
    if (service === 'git-receive-pack') await this.locks.run(project.id, serve);
    else await serve();
  }

  /**
   * The project and what the caller may do with it: a user's (or anonymous) abilities come with the
   * project from the one resolver (one SQL statement); a build token reads its own project only.
   */
  private async resolve(caller: Caller, path: string): Promise<{ project: Project; abilities: Set<ProjectAbility> }> {
    if (caller.build) {
      const project = await this.projects.find(path);
      const own = caller.build.projectId === project.id;
      return { project, abilities: new Set<ProjectAbility>(own ? ['read_project', 'download_code'] : []) };
    }
    // unreadable or unknown: 404 Project Not Found (401 for anonymous callers, in handle)
    return this.projects.resolve(caller.user, path, 'read_project');
  }

  private async authenticate(req: Request): Promise<Caller> {
    const header = req.headers.authorization;
    if (!header) return {};
    const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim());
    if (!m) throw unauthorized();
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) throw unauthorized();
    const login = decoded.slice(0, colon);
    const secret = decoded.slice(colon + 1);
    if (!login || !secret) throw unauthorized();
    if (login === 'gitlab-ci-token') {
      const grant = this.buildTokens ? await this.buildTokens(secret) : undefined;
      if (!grant) throw unauthorized();
      return { build: grant };
    }
    if (login === 'oauth2') {
      const user = await this.auth.userByAccessToken(secret).catch(() => undefined);
      if (!user) throw unauthorized();
      return { user };
    }
    const byToken = await this.auth.userByPrivateToken(secret);
    if (byToken && byToken.username.toLowerCase() === login.toLowerCase()) return { user: byToken };
    try {
      return { user: await this.session.signIn(login, secret, req.ip ?? '') };
    } catch (e) {
      if (e instanceof TooManyRequests) throw e;
      throw unauthorized();
    }
  }
}
