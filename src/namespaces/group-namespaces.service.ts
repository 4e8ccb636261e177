import { Injectable } from '@nestjs/common';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { GroupKey, GroupsRepository } from './groups.repository';
import { Namespace } from './namespace.entity';

export type { GroupKey } from './groups.repository';

/**
 * Groups as rows of `namespaces` (kind `group`; GitLab's Group is a Namespace). The namespaces area
 * owns the table; the groups area (its API, rules and events) reads and writes group rows through
 * this service. Methods that write take the caller's transaction.
 */
@Injectable()
export class GroupNamespacesService {
  constructor(private readonly groups: GroupsRepository) {}

  find(key: GroupKey): Promise<Namespace | null> {
    return this.groups.find(key);
  }

  /** The group with the caller's level in it (0 for none, or no caller): one statement. */
  findWithLevel(key: GroupKey, userId: number | null): Promise<{ group: Namespace; level: number } | null> {
    return this.groups.findWithLevel(key, userId);
  }

  /** A page of groups by name, with the total; `memberId` keeps the groups that user is a member of. */
  list(filter: { memberId?: number; search?: string }, page: PageRequest): Promise<[Namespace[], number]> {
    return this.groups.list(filter, page);
  }

  /** Whether any namespace (user or group) has this path, in any case. */
  pathTaken(tx: Tx, path: string): Promise<boolean> {
    return this.groups.pathTaken(tx, path);
  }

  /** Inserts the group row (its first member: MembershipsService.addGroupOwner). */
  insert(tx: Tx, values: Partial<Namespace>): Promise<Namespace> {
    return this.groups.insert(tx, values);
  }

  /** Locks the group's row until commit: project creations and transfers into it wait (or fail after). */
  lock(tx: Tx, groupId: number): Promise<void> {
    return this.groups.lock(tx, groupId);
  }

  delete(tx: Tx, groupId: number): Promise<void> {
    return this.groups.delete(tx, groupId);
  }
}
