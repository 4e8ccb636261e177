import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { User } from './user.entity';

/** Queries on `users`. Other areas reach users through this (exported by UsersModule), never by SQL. */
@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  /** Users by id, in one query (the authors, assignees and owners a page of rows refers to). */
  async byIds(ids: Iterable<number | null | undefined>): Promise<Map<number, User>> {
    const unique = [...new Set([...ids].filter((id): id is number => typeof id === 'number'))];
    if (unique.length === 0) return new Map();
    const rows = await this.users.findBy({ id: In(unique) });
    return new Map(rows.map((u) => [u.id, u]));
  }

  byId(id: number): Promise<User | null> {
    return this.users.findOneBy({ id });
  }
}
