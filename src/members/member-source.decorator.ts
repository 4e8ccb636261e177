import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** What a membership belongs to: a project or a group. */
export type MemberSourceKind = 'project' | 'group';

/**
 * Handler parameter: which of its routes (`projects/:id/members…` or `groups/:id/members…`) the
 * members controller was reached by, from the matched route pattern (never from user input).
 */
export const MemberSource = createParamDecorator((_: unknown, ctx: ExecutionContext): MemberSourceKind => {
  const req = ctx.switchToHttp().getRequest<{ route?: { path?: unknown } }>();
  const path = req.route?.path;
  const pattern = typeof path === 'string' ? path : '';
  return /\/groups\/:id\/members/.test(pattern) ? 'group' : 'project';
});
