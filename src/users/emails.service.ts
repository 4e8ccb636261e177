import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUniqueViolation, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Params, parseId } from '../common/params/params';
import { Email } from './email.entity';
import { emailErrors } from './user-attributes';
import { User } from './user.entity';
import { lockEmail } from './users.service';

const TAKEN = () => new ValidationFailed({ email: ['has already been taken'] });

/** Secondary email addresses: valid format, unique across primary and secondary addresses. */
@Injectable()
export class EmailsService {
  constructor(private readonly ds: DataSource) {}

  listFor(user: User): Promise<Email[]> {
    return this.ds.getRepository(Email).find({ where: { userId: user.id }, order: { id: 'ASC' } });
  }

  async getOwn(user: User, rawId: string): Promise<Email> {
    const id = parseId(rawId);
    const email = id === undefined ? null : await this.ds.getRepository(Email).findOne({ where: { id, userId: user.id } });
    if (!email) throw new NotFound('Email');
    return email;
  }

  async add(user: User, p: Params): Promise<Email> {
    const address = p.requireString('email').trim();
    const errors = emailErrors(address);
    if (errors.length) throw new ValidationFailed({ email: errors });
    try {
      return await this.ds.transaction(async (m) => {
        await lockEmail(m, address);
        const rows: { n: number }[] = await m.query(
          `SELECT count(*)::int AS n FROM (
             SELECT id FROM users WHERE lower(email) = lower($1)
             UNION ALL SELECT id FROM emails WHERE lower(email) = lower($1)) t`,
          [address],
        );
        if (rows[0].n > 0) throw TAKEN();
        const repo = m.getRepository(Email);
        return repo.save(repo.create({ userId: user.id, email: address }));
      });
    } catch (e) {
      if (isUniqueViolation(e, 'emails_email_key')) throw TAKEN();
      throw e;
    }
  }

  /** Idempotent delete of one of the user's addresses: the deleted email or undefined. */
  async removeOwn(user: User, rawId: string): Promise<Email | undefined> {
    const id = parseId(rawId);
    if (id === undefined) return undefined;
    return this.ds.transaction(async (m) => {
      const email = await m.getRepository(Email).findOne({ where: { id, userId: user.id } });
      if (email) await m.getRepository(Email).delete({ id });
      return email ?? undefined;
    });
  }

  async removeOf(user: User, rawId: string): Promise<Email> {
    const email = await this.removeOwn(user, rawId);
    if (!email) throw new NotFound('Email');
    return email;
  }
}
