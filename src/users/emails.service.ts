import { Injectable } from '@nestjs/common';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { isUniqueViolation, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Transactions } from '../database/transactions';
import { DomainEvents } from '../domain-events/domain-events';
import { CreateEmailDto } from './dto/email.dto';
import { emailErrors } from './dto/user-rules';
import { Email } from './email.entity';
import { EmailsRepository } from './emails.repository';
import { User } from './user.entity';
import { UsersRepository } from './users.repository';
import type { Caller } from '../common/caller/caller';

const TAKEN = () => new ValidationFailed({ email: ['has already been taken'] });

/**
 * Secondary email addresses: valid format, unique across primary and secondary addresses. `…Own`
 * methods act on the caller's addresses; `…Of` methods on a user's by path id (`@Admin()` routes).
 */
@Injectable()
export class EmailsService {
  constructor(
    private readonly emails: EmailsRepository,
    private readonly users: UsersRepository,
    private readonly tx: Transactions,
    private readonly domainEvents: DomainEvents,
  ) {}

  /** The user named by a path id, or `404 User Not Found`. */
  private async owner(userId: number): Promise<User> {
    const user = await this.users.byId(userId);
    if (!user) throw new NotFound('User');
    return user;
  }

  /** Whole on the first page unless `per_page` says otherwise (clients read the list whole). */
  async listOwn(user: Caller, q: PageParams): Promise<Paginated<Email>> {
    return paginateAll(await this.emails.listFor(user.id), q, { whole: true });
  }

  async listOf(userId: number, q: PageParams): Promise<Paginated<Email>> {
    return paginateAll(await this.emails.listFor((await this.owner(userId)).id), q, { whole: true });
  }

  async getOwn(user: Caller, id: number): Promise<Email> {
    const email = await this.emails.findOwn(user.id, id);
    if (!email) throw new NotFound('Email');
    return email;
  }

  addOwn(user: Caller, dto: CreateEmailDto): Promise<Email> {
    return this.add(user, dto);
  }

  async addTo(userId: number, dto: CreateEmailDto): Promise<Email> {
    return this.add(await this.owner(userId), dto);
  }

  private async add(user: Caller, dto: CreateEmailDto): Promise<Email> {
    const address = dto.email;
    const errors = emailErrors(address);
    if (errors.length) throw new ValidationFailed({ email: errors });
    try {
      return await this.tx.run(async (tx) => {
        await this.users.lockEmail(tx, address);
        if (await this.users.emailTaken(tx, address)) throw TAKEN();
        const email = await this.emails.insert(tx, { userId: user.id, email: address });
        await this.domainEvents.emit(tx, 'email.created', { emailId: email.id, userId: user.id, email: email.email });
        return email;
      });
    } catch (e) {
      if (isUniqueViolation(e, 'emails_email_key')) throw TAKEN();
      throw e;
    }
  }

  /**
   * Idempotent delete of one of the user's addresses: the deleted email or undefined. A notification
   * email that was this address goes back to the primary one (`user.emails_changed`).
   */
  async removeOwn(user: Caller, id: number): Promise<Email | undefined> {
    return this.tx.run(async (tx) => {
      const email = await this.emails.findOwn(user.id, id, tx);
      if (!email) return undefined;
      await this.emails.delete(tx, id);
      await this.domainEvents.emit(tx, 'user.emails_changed', { userId: user.id, removed: [email.email] });
      return email;
    });
  }

  /** Admin delete: `404 User Not Found`, then `404 Email Not Found` when absent. */
  async removeOf(userId: number, id: number): Promise<Email> {
    const email = await this.removeOwn(await this.owner(userId), id);
    if (!email) throw new NotFound('Email');
    return email;
  }
}
