import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import { Email } from './email.entity';

/** Every query on `emails` (users' secondary addresses; uniqueness with the primary ones is UsersRepository.emailTaken). */
@Injectable()
export class EmailsRepository {
  constructor(@InjectRepository(Email) private readonly emails: Repository<Email>) {}

  listFor(userId: number): Promise<Email[]> {
    return this.emails.find({ where: { userId }, order: { id: 'ASC' } });
  }

  findOwn(userId: number, id: number, tx?: Tx): Promise<Email | null> {
    return (tx ? tx.getRepository(Email) : this.emails).findOne({ where: { id, userId } });
  }

  /** The user's secondary address `email` (any case), locked for the transaction. */
  findOwnByAddress(tx: Tx, userId: number, email: string): Promise<Email | null> {
    return tx
      .getRepository(Email)
      .createQueryBuilder('e')
      .where('e.user_id = :userId AND lower(e.email) = lower(:email)', { userId, email })
      .setLock('pessimistic_write')
      .getOne();
  }

  insert(tx: Tx, values: Partial<Email>): Promise<Email> {
    const repo = tx.getRepository(Email);
    return repo.save(repo.create(values));
  }

  async delete(tx: Tx, id: number): Promise<void> {
    await tx.getRepository(Email).delete({ id });
  }
}
