import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AuthService } from '../auth/auth.service';
import { findDeclaredMethods } from '../common/discovery/declared-methods';
import { DomainError, NotFound, OAuthError, ServiceUnavailable, TooManyRequests } from '../common/errors/domain-errors';
import { lookingUpCredentials } from '../auth/credential-lookup';
import { ApiRequest } from '../common/http/http-pipeline';
import { GitService } from '../git/git.service';
import { SmartHttpAction } from '../git/smart-http';
import { GitRequestAborted, GitRequestRefused } from '../git/smart-http-request';
import { transferClient } from '../git/transfer-limiter';
import { SessionService } from '../users/session.service';
import { BuildTokenGrant, GitAccess, GitAccessDenied, GitCaller, GitGrant } from '../git-access/git-access.service';
import { GitAuthBan } from '../throttle/git-auth-ban';
import { BUILD_TOKEN_RESOLVER } from '../git-access/build-tokens';
import { parseProjectRef } from '../common/params/refs';
import { LfsTokens } from '../lfs/lfs-tokens';
import { UserDirectory } from '../users/user-directory.service';

export type GitAction = SmartHttpAction;
export type { BuildTokenGrant };
export type BuildTokenResolver = (token: string) => Promise<BuildTokenGrant | undefined>;

type Caller = GitCaller;

class GitHttpError extends DomainError {
  constructor(
    readonly status: number,
    private readonly text: string,
    private readonly extraHeaders: Record<string, string> = {},
  ) {
    super(text);
  }
  body() {
    return { message: this.text };
  }
  override headers(): Record<string, string> {
    return this.extraHeaders;
  }
}

const REFUSAL_TITLE: Record<GitRequestRefused['status'], string> = { 400: 'Bad request', 408: 'Request Timeout', 413: 'Request Entity Too Large' };

/** A request refused before git served it: its rest is not read, so the connection closes after the answer. */
const refusedRequest = (e: GitRequestRefused) => new GitHttpError(e.status, `${e.status} ${REFUSAL_TITLE[e.status]} - ${e.message}`, { Connection: 'close' });

export const unauthorized = () => new GitHttpError(401, 'HTTP Basic: Access denied', { 'WWW-Authenticate': 'Basic realm="GitLab"' });

/**
 * Git smart HTTP: authenticates HTTP Basic (password, private token, `oauth2` + OAuth token,
 * `gitlab-ci-token` + build token), authorises with the same policy as the API, then streams.
 */
@Injectable()
export class GitHttpService implements OnModuleInit {
  private buildTokens?: BuildTokenResolver;

  constructor(
    private readonly access: GitAccess,
    private readonly auth: AuthService,
    private readonly session: SessionService,
    private readonly git: GitService,
    private readonly ban: GitAuthBan,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly lfsTokens: LfsTokens,
    private readonly users: UserDirectory,
  ) {}

  /** How build tokens resolve (`gitlab-ci-token` clones): the CI area's `@ResolvesBuildToken()` method. */
  onModuleInit(): void {
    const [resolver, ...more] = findDeclaredMethods<true>(this.discovery, this.scanner, BUILD_TOKEN_RESOLVER);
    if (more.length) throw new Error(`more than one @ResolvesBuildToken(): ${[resolver, ...more].map((r) => r.id).join(', ')}`);
    if (resolver) this.buildTokens = (token) => resolver.call(token) as ReturnType<BuildTokenResolver>;
  }

  /** One smart HTTP request: `requested` is the `service` that `info/refs` names. */
  async handle(req: Request, res: Response, namespace: string, repo: string, action: GitAction, requested?: string): Promise<void> {
    const service = action === 'info/refs' ? (requested ?? '') : action;
    if (service !== 'git-upload-pack' && service !== 'git-receive-pack') {
      throw new GitHttpError(403, 'Only the smart HTTP protocol is supported');
    }
    const ip = req.ip ?? '';
    const caller = await this.callerOf(req);
    // a deploy key's LFS token reads only (8.17's lfs_deploy_token: read_authentication_abilities)
    if (caller.deployKey && service === 'git-receive-pack') throw new GitHttpError(403, 'This deploy key does not have write access to this project.');
    const path = `${namespace}/${repo.replace(/\.git$/i, '')}`;
    let grant: GitGrant;
    try {
      grant = await this.access.authorize(caller, parseProjectRef(path), service);
    } catch (e) {
      // anonymous callers are asked for credentials rather than told what they may not see or do
      if ((e instanceof NotFound || e instanceof GitAccessDenied) && !caller.user && !caller.build) throw unauthorized();
      if (e instanceof GitAccessDenied) throw new GitHttpError(403, e.message);
      throw e;
    }
    try {
      // the request (wants and haves; a push's ref updates) is read before the push lock and the transfer slot
      const body = await this.git.readSmartHttpRequest(req, action);
      await this.access.run(
        grant,
        caller,
        'http',
        (onUpdates) =>
          this.git.serveSmartHttp(grant.repository, {
            req,
            res,
            action,
            remoteUser: caller.user?.username ?? 'anonymous',
            client: transferClient({ userId: caller.user?.id, buildProjectId: caller.build?.projectId, address: ip }),
            pushRules: grant.pushRules,
            onUpdates,
            body,
          }),
        { advertisement: action === 'info/refs' },
      );
    } catch (e) {
      if (e instanceof GitRequestAborted) return; // nobody to answer
      if (e instanceof GitRequestRefused) throw refusedRequest(e);
      throw e;
    }
  }

  /**
   * Who sends `req` (HTTP Basic; no header: anonymous), with GitLab 8's ban of addresses that keep
   * failing: the git transport's and the LFS API's authentication (8.17's GitHttpClientController).
   */
  async callerOf(req: Request): Promise<Caller> {
    const ip = req.ip ?? '';
    // GitLab 8's Rack::Attack blocklist: a banned IP gets 403 before any credential is looked at
    if (await this.ban.banned(ip)) throw new GitHttpError(403, 'Forbidden');
    // credentials are checked only within the attempts reserved for this IP (atomic: no burst of concurrent guesses)
    if (req.headers.authorization && !(await this.ban.reserve(ip))) throw new GitHttpError(403, 'Forbidden');
    let caller: Caller;
    try {
      caller = await this.authenticate(req);
    } catch (e) {
      if (e instanceof GitHttpError || e instanceof TooManyRequests) await this.ban.failed(ip);
      throw e;
    }
    if (caller.user || caller.build || caller.deployKey) await this.ban.succeeded(ip);
    const logged = req as ApiRequest;
    logged.userId = caller.user?.id;
    logged.username = caller.user?.username ?? (caller.build ? 'gitlab-ci-token' : undefined);
    return caller;
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
    // a lookup the database could not answer is a 503 (ServiceUnavailable, logged), never a 401: only
    // an answer about the credential itself (none such, revoked, expired, blocked, sign-in off) is
    if (login === 'gitlab-ci-token') {
      const resolve = this.buildTokens;
      const grant = resolve ? await lookingUpCredentials(() => resolve(secret)) : undefined;
      if (!grant) throw unauthorized();
      return { build: grant };
    }
    if (login === 'oauth2') {
      const user = await this.auth.userByAccessToken(secret).catch((e: unknown) => {
        if (e instanceof OAuthError) return undefined; // revoked or expired: the Basic challenge, as any bad password
        throw e;
      });
      if (!user) throw unauthorized();
      return { user };
    }
    // a token of `git-lfs-authenticate` (SSH): 8.17's lfs_token_check, for git and LFS over HTTP alike
    const lfs = this.lfsTokens.verify(login, secret);
    if (lfs) {
      if ('deployKeyId' in lfs) return { deployKey: { id: lfs.deployKeyId } };
      const user = await lookingUpCredentials(() => this.users.byId(lfs.userId));
      if (user && user.state === 'active' && user.username.toLowerCase() === login.toLowerCase()) return { user };
      throw unauthorized();
    }
    const byToken = await this.auth.userByPrivateToken(secret);
    if (byToken && byToken.username.toLowerCase() === login.toLowerCase()) return { user: byToken };
    const signedIn = await lookingUpCredentials(() => this.session.signIn(login, secret, req.ip ?? '', unauthorized)).catch((e: unknown) => {
      if (e instanceof TooManyRequests || e instanceof ServiceUnavailable) throw e;
      throw unauthorized(); // a wrong password, a blocked user, password sign-in switched off
    });
    return { user: signedIn };
  }
}
