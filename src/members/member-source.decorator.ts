import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { GroupRef, parseGroupRef, parseProjectRef, ProjectRef } from '../common/params/refs';

/** What a membership belongs to: a project or a group. */
export type MemberSourceKind = 'project' | 'group';

/** The project or group a members route names: its kind and its `:id`, parsed by that kind's parser. */
export type MemberSourceRef = { kind: 'project'; ref: ProjectRef } | { kind: 'group'; ref: GroupRef };

/**
 * Handler parameter: which of its routes (`projects/:id/members…` or `groups/:id/members…`) the
 * members controller was reached by, from the matched route pattern (never from user input), with
 * the route's `:id` parsed as that kind's reference (`parseProjectRef` / `parseGroupRef`).
 */
export const MemberSource = createParamDecorator((_: unknown, ctx: ExecutionContext): MemberSourceRef => {
  const req = ctx.switchToHttp().getRequest<{ route?: { path?: unknown }; params?: Record<string, string> }>();
  const path = req.route?.path;
  const pattern = typeof path === 'string' ? path : '';
  const id = req.params?.id ?? '';
  return /\/groups\/:id\/members/.test(pattern) ? { kind: 'group', ref: parseGroupRef(id) } : { kind: 'project', ref: parseProjectRef(id) };
});
