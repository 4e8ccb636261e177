import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { MembershipsRepository } from './memberships.repository';

/**
 * The memberships other areas create: the first member of a new project or group. The members area
 * owns `project_members` and `group_members`; the projects and groups areas call this inside their
 * creating transaction (MembershipsModule has no dependency on them, so they can import it).
 */
@Injectable()
export class MembershipsService {
  constructor(private readonly members: MembershipsRepository) {}

  /** The creator of a new project as its first member (`accessLevel`: master), in the creating transaction. */
  addProjectOwner(tx: Tx, projectId: number, userId: number, accessLevel: number): Promise<void> {
    return this.members.addFirst(tx, { kind: 'project', id: projectId }, userId, accessLevel);
  }

  /** The creator of a new group as its first member (`accessLevel`: owner), in the creating transaction. */
  addGroupOwner(tx: Tx, groupId: number, userId: number, accessLevel: number): Promise<void> {
    return this.members.addFirst(tx, { kind: 'group', id: groupId }, userId, accessLevel);
  }
}
