import { PresentContext, presentUserBasic } from '../users/users.presenter';
import { MemberRow, Removal } from './members.service';
import { AccessRevokedResponse, MemberResponse } from './members.responses';

/** GitLab's ProjectMember / GroupMember: the user summary plus `access_level`. */
export function presentMember(m: MemberRow, ctx: PresentContext): MemberResponse {
  return { ...presentUserBasic(m.user, ctx), access_level: m.accessLevel };
}

/** `DELETE .../members/:user_id`: the removed member, or GitLab's `{"message":"Access revoked"}` for a non-member. */
export function presentRemoval(r: Removal, ctx: PresentContext): MemberResponse | AccessRevokedResponse {
  return r.removed ? presentMember(r.removed, ctx) : { message: 'Access revoked', id: r.userId };
}
