import { Injectable } from '@nestjs/common';
import { Db, type Tx } from './db.js';

/**
 * For services: several repository calls as one transaction (a chunk of webhook events and the messages, windows and
 * templates they change; a change and its audit entry). The work receives a Tx to pass to repository methods that
 * take one; a statement a repository builds with `db.on()` inside the work joins the transaction even without the Tx
 * (prepared statements run where they are told: pass the Tx). A nested `run` joins the outer one. Anything thrown
 * rolls the whole unit back.
 */
@Injectable()
export class UnitOfWork {
  constructor(private readonly db: Db) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Reads of several repositories in one snapshot (read-only REPEATABLE READ): they see the same commits (a message
   * and its status history, a page and its count). Inside a `run` it joins that transaction instead.
   */
  snapshot<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.snapshot(work);
  }
}
