import { Injectable } from '@nestjs/common';
import { lookupText } from '../common/dto/fields';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern } from '../common/params/params';
import { Tx } from '../database/transactions';
import { ListNamespacesDto } from './dto/namespace.dto';
import { Namespace } from './namespace.entity';
import { NamespacesRepository } from './namespaces.repository';
import type { Caller } from '../common/caller/caller';

/** `GET /namespaces`: an administrator sees all; others their own namespace and their groups. */
@Injectable()
export class NamespacesService {
  constructor(private readonly namespaces: NamespacesRepository) {}

  async list(viewer: Caller, q: ListNamespacesDto): Promise<Paginated<Namespace>> {
    const page = pageRequest(q);
    const search = q.search === undefined ? undefined : lookupText(q.search.trim());
    const [rows, total] = await this.namespaces.list(
      { memberId: viewer.admin ? undefined : viewer.id, pattern: search ? containsPattern(search) : undefined },
      page,
    );
    return new Paginated(rows, total, page);
  }

  /** A user's personal namespace. */
  personalOf(ownerId: number): Promise<Namespace | null> {
    return this.namespaces.personalOf(ownerId);
  }

  byId(id: number): Promise<Namespace | null> {
    return this.namespaces.byId(id);
  }

  /** Creates a user's personal namespace (path and name are the username; public), in the caller's transaction. */
  insertPersonal(tx: Tx, ownerId: number, username: string): Promise<void> {
    return this.namespaces.insertPersonal(tx, ownerId, username);
  }

  /** Follows a change of username. */
  renamePersonal(tx: Tx, ownerId: number, username: string): Promise<void> {
    return this.namespaces.renamePersonal(tx, ownerId, username);
  }

  /** Whether a namespace other than `ownerId`'s own has this path, case-insensitively. */
  pathTaken(tx: Tx, path: string, ownerId: number | null = null): Promise<boolean> {
    return this.namespaces.pathTaken(tx, path, ownerId);
  }

  /** Removes a user's personal namespace (its projects' rows are gone first: ProjectRecordsService.removePersonal). */
  removePersonal(tx: Tx, ownerId: number): Promise<void> {
    return this.namespaces.removePersonal(tx, ownerId);
  }
}
