import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { User } from '../../users/user.entity';

export const IS_PUBLIC = 'auth:public';
export const IS_ADMIN = 'auth:admin';

/** The route needs no credentials (credentials, if sent and valid, still identify the caller). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
/** The route is for administrators only: others get 403. */
export const Admin = () => SetMetadata(IS_ADMIN, true);

/** The authenticated user (after sudo), or undefined on a public route called anonymously. */
export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): User | undefined => {
  return ctx.switchToHttp().getRequest<{ user?: User }>().user;
});
