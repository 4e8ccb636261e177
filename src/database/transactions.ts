import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/** A unit of work: repositories take the `tx` they are given, so one transaction spans several areas. */
export type Tx = EntityManager;

/**
 * The one place services open a transaction (they hold no DataSource). On the embedded default the
 * pool has one connection, so transactions queue instead of interleaving.
 */
@Injectable()
export class Transactions {
  constructor(private readonly ds: DataSource) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.ds.transaction(work);
  }
}
