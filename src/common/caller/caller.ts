import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'auth:public';
export const IS_ADMIN = 'auth:admin';

/**
 * Who is calling: what controllers and services need to know of the signed-in user to decide (the
 * policy) and to attribute (ids in rows and events, name and e-mail in commits). The guard (src/auth) puts the user on the
 * request after sudo; the users area's `User` row has these fields, so a row is a caller. Code that
 * needs more of the user (a name and e-mail for a commit, a profile) reads it from the users area.
 */
export interface Caller {
  id: number;
  username: string;
  admin: boolean;
  /** `active`, `blocked` or `ldap_blocked` (the users area's `UserState`). */
  state: string;
  external: boolean;
  /** May create groups (an administrator's setting per user). */
  canCreateGroup: boolean;
  /** The name and e-mail git records for what the caller writes (commits, merges, tags). */
  name: string;
  email: string;
}

/** The route needs no credentials (credentials, if sent and valid, still identify the caller). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
/** The route is for administrators only: others get 403. */
export const Admin = () => SetMetadata(IS_ADMIN, true);

/** The authenticated user (after sudo), or undefined on a public route called anonymously. */
export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller | undefined => {
  return ctx.switchToHttp().getRequest<{ user?: Caller }>().user;
});
