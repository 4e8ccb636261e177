import { Injectable } from '@nestjs/common';
import { lookupText } from '../common/dto/fields';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern } from '../common/params/params';
import { NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { groupAbilities } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { Tx } from '../database/transactions';
import { ListNamespacesDto } from './dto/namespace.dto';
import { Namespace } from './namespace.entity';
import { NamespacesRepository } from './namespaces.repository';
import type { Caller } from '../common/caller/caller';

/** `GET /namespaces`: an administrator sees all; others their own namespace and their groups. */
@Injectable()
export class NamespacesService {
  constructor(
    private readonly namespaces: NamespacesRepository,
    private readonly policy: PolicyService,
  ) {}

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
  /** The namespace a new project goes to: the creator's own, or one the caller may create projects in (else 400 `namespace is not valid`). */
  async creationTarget(caller: Caller, creatorId: number, namespaceId?: number): Promise<Namespace> {
    if (namespaceId === undefined) {
      const own = await this.personalOf(creatorId);
      if (!own) throw new NotFound('Namespace');
      return own;
    }
    const ns = await this.byId(namespaceId);
    const invalid = new ValidationFailed({ namespace: ['is not valid'] });
    if (!ns) throw invalid;
    if (caller.admin) return ns;
    if (ns.kind === 'user') {
      if (ns.ownerId !== caller.id) throw invalid;
      return ns;
    }
    const level = await this.policy.groupLevel(caller, ns.id);
    if (!groupAbilities(caller, ns, level).has('create_projects')) throw invalid;
    return ns;
  }

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
