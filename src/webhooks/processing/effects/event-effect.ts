import type { Event, Prisma } from '../../../generated/prisma/client.js';

export type Tx = Prisma.TransactionClient;

/** The stored event an effect acts on. */
export type StoredEvent = Pick<
  Event,
  'id' | 'wabaId' | 'phoneNumberId' | 'eventType' | 'kind' | 'status' | 'recipient' | 'messageId' | 'upstreamTimestamp' | 'errorCode' | 'errorTitle' | 'errorDetail' | 'raw' | 'createdAt'
>;

/**
 * `applied`: done (including "nothing to change"); `waiting`: what the event refers to is not stored yet
 * (a status whose message has no wamid yet), so the event stays unprocessed and is tried again later.
 */
export type EffectOutcome = 'applied' | 'waiting';

/**
 * What an event changes beyond being stored. `apply` runs inside the transaction that claimed the event
 * (processed=false → true), so an effect is applied at most once even with concurrent or retried jobs.
 */
export interface EventEffect {
  /** Whether this event has anything to apply; events without an effect are claimed in bulk. */
  appliesTo(event: StoredEvent): boolean;
  apply(tx: Tx, event: StoredEvent): Promise<EffectOutcome>;
}
