import { PresentContext, presentUserBasic } from '../users/users.presenter';
import { MemberRow } from './members.service';

/** GitLab's ProjectMember / GroupMember: the user summary plus `access_level`. */
export function presentMember(m: MemberRow, ctx: PresentContext) {
  return { ...presentUserBasic(m.user, ctx), access_level: m.accessLevel };
}
