import { Injectable } from '@nestjs/common';
import { lookupText } from '../common/dto/fields';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern } from '../common/params/params';
import { User } from '../users/user.entity';
import { ListNamespacesDto } from './dto/namespace.dto';
import { Namespace } from './namespace.entity';
import { NamespacesRepository } from './namespaces.repository';

/** `GET /namespaces`: an administrator sees all; others their own namespace and their groups. */
@Injectable()
export class NamespacesService {
  constructor(private readonly namespaces: NamespacesRepository) {}

  async list(viewer: User, q: ListNamespacesDto): Promise<Paginated<Namespace>> {
    const page = pageRequest(q);
    const search = q.search === undefined ? undefined : lookupText(q.search.trim());
    const [rows, total] = await this.namespaces.list(
      { memberId: viewer.admin ? undefined : viewer.id, pattern: search ? containsPattern(search) : undefined },
      page,
    );
    return new Paginated(rows, total, page);
  }
}
