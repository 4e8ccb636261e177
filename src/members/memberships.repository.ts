import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { GroupMember, ProjectMember } from './member.entities';
import type { MemberTarget } from './members.repository';

/**
 * The writes on `project_members` and `group_members` that other areas' transactions make
 * (MembershipsService, MembershipsModule); the members API's queries are MembersRepository's.
 */
@Injectable()
export class MembershipsRepository {
  /** The first membership of a new project or group (its creator), notifications at the global level. */
  async addFirst(tx: Tx, t: MemberTarget, userId: number, accessLevel: number): Promise<void> {
    if (t.kind === 'project') await tx.getRepository(ProjectMember).insert({ projectId: t.id, userId, accessLevel, notificationLevel: 3 });
    else await tx.getRepository(GroupMember).insert({ namespaceId: t.id, userId, accessLevel, notificationLevel: 3 });
  }
}
