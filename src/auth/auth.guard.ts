import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import passport from 'passport';
import type { User } from '../users/user.entity';
import { DomainError, Forbidden, Unauthorized } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';
import { AuthService } from './auth.service';
import { IS_ADMIN, IS_PUBLIC } from '../common/caller/caller';

type AuthRequest = Request & { user?: User; sudoer?: User; userId?: number; username?: string; params_?: Params; input_?: Record<string, unknown> };

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The `private_token` param; an unreadable one (e.g. `private_token[a]=b`) is an invalid credential, not a 400. */
function readPrivateToken(params: Params): string | undefined {
  try {
    return params.string('private_token');
  } catch {
    return '';
  }
}

/**
 * The one global guard: every route needs a user unless marked @Public(); @Admin() routes need
 * an administrator. Private token first (param wins over header), then OAuth bearer, then sudo.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<AuthRequest>();
    const res = ctx.switchToHttp().getResponse<Response>();
    const targets = [ctx.getHandler(), ctx.getClass()];
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) ?? false;
    const adminOnly = this.reflector.getAllAndOverride<boolean>(IS_ADMIN, targets) ?? false;
    if (!req.params_) req.params_ = Params.fromRequest(req);
    const params = req.params_;
    // The handler's @Input() reads the same merged inputs: merge query and body once per request.
    if (!req.input_) req.input_ = params.raw;

    let user: User | undefined;
    try {
      const privateToken = readPrivateToken(params) ?? header(req, 'private-token');
      if (privateToken !== undefined) user = await this.auth.userByPrivateToken(privateToken);
      if (!user) user = await this.bearer(req, res);
    } catch (e) {
      // a stray or stale credential must not break a public route (e.g. POST /session); a credential that
      // could not be checked (503: the database did not answer) is no stray one, and is never served anonymously
      if (!isPublic || !(e instanceof DomainError) || e.status >= 500) throw e;
      user = undefined;
    }

    if (user) {
      const sudo = params.string('sudo') ?? header(req, 'sudo');
      if (sudo !== undefined && sudo.trim() !== '') {
        const target = await this.auth.sudo(user, sudo.trim());
        if (target !== user) req.sudoer = user;
        user = target;
      }
      req.user = user;
      req.userId = user.id;
      req.username = user.username;
    }
    if (!user && !isPublic) throw new Unauthorized();
    if (adminOnly && !user?.admin) throw new Forbidden();
    return true;
  }

  private bearer(req: Request, res: Response): Promise<User | undefined> {
    const hasBearer =
      /^bearer\s/i.test(header(req, 'authorization') ?? '') ||
      (req.query as Record<string, unknown>)?.access_token !== undefined ||
      (req.body as Record<string, unknown> | undefined)?.access_token !== undefined;
    if (!hasBearer) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const fail = (err: unknown) => reject(err); // passport's error, passed on as it came
      const authenticate = passport.authenticate('bearer', { session: false }, (err: unknown, user: User | false) => {
        if (err) fail(err);
        else resolve(user || undefined);
      }) as (req: Request, res: Response, next: (err?: unknown) => void) => void;
      authenticate(req, res, (err: unknown) => (err ? fail(err) : resolve(undefined)));
    });
  }
}
