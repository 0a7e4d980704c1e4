import type { Tx } from '../../../core/db/db.js';
import type { StoredEvent } from '../../../events/events.repository.js';

export type { StoredEvent };

/**
 * An item an effect acts on: a draft about to be stored in the same transaction, or a stored event still
 * unprocessed. `createdAt` is set once the item is stored (the fallback time when Meta gave none).
 */
export type EffectItem = Pick<
  StoredEvent,
  | 'wabaId'
  | 'phoneNumberId'
  | 'eventType'
  | 'kind'
  | 'status'
  | 'recipient'
  | 'userId'
  | 'messageId'
  | 'upstreamTimestamp'
  | 'errorCode'
  | 'errorTitle'
  | 'errorDetail'
> & { raw: unknown; pricing: unknown; createdAt?: Date };

/** An effect made ready for a chunk of items, inside the chunk's transaction. */
export interface PreparedEffect<T extends EffectItem> {
  /** Items whose effect cannot be applied yet (what they refer to is not stored): they stay unprocessed. */
  waiting: T[];
  /** Applies the effect of `owned`: the ready items this transaction took ownership of, in order. */
  apply(owned: T[]): Promise<void>;
}

/**
 * What a kind of event changes beyond being stored, applied set-based: per chunk of items, one transaction
 * runs `prepare` for every effect (locking what the items touch), takes ownership of the ready items (stores
 * them already processed, or claims stored ones: processed false → true), then `apply` with the owned ones.
 * A concurrent or retried job finds them owned and skips them; a failure rolls the chunk back, ownership
 * included. Items that no effect applies to are just owned.
 */
export interface EventEffect {
  appliesTo(item: EffectItem): boolean;
  prepare<T extends EffectItem>(tx: Tx, items: T[]): Promise<PreparedEffect<T>>;
}

/** For effects with nothing to lock or wait for. */
export function readyAll<T extends EffectItem>(apply: (owned: T[]) => Promise<void>): PreparedEffect<T> {
  return { waiting: [], apply };
}
