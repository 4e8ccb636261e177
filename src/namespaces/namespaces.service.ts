import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { Namespace } from './namespace.entity';

/** `GET /namespaces`: an administrator sees all; others their own namespace and their groups. */
@Injectable()
export class NamespacesService {
  constructor(private readonly ds: DataSource) {}

  async list(viewer: User, p: Params): Promise<Paginated<Namespace>> {
    const page = pageRequest(p);
    const qb = this.ds.getRepository(Namespace).createQueryBuilder('n');
    if (!viewer.admin) {
      qb.where(
        `((n.kind = 'user' AND n.owner_id = :uid) OR
          (n.kind = 'group' AND n.id IN (SELECT namespace_id FROM group_members WHERE user_id = :uid)))`,
        { uid: viewer.id },
      );
    }
    const search = p.string('search')?.trim();
    if (search) {
      const like = containsPattern(search);
      qb.andWhere('(lower(n.name) LIKE :like OR lower(n.path) LIKE :like)', { like });
    }
    qb.orderBy('n.id', 'DESC').offset(page.offset).limit(page.perPage);
    const [rows, total] = await qb.getManyAndCount();
    return new Paginated(rows, total, page);
  }
}
