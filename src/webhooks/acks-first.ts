// Acknowledgements first: while a receiver is saturated (WEBHOOK_HOLD_PROCESSING_IN_FLIGHT acknowledgements waiting at
// once in one API process), the workers hold the processing of deliveries, for at most WEBHOOK_HOLD_PROCESSING_MAX_MS,
// and catch up after. On shared cores and one PostgreSQL the processing's CPU and write-ahead log are what the waiting
// acknowledgements wait behind; a burst is then stored at about twice the rate and processed no later as a whole
// (docs/operations-and-scaling.md, "Acknowledgements first"). The API says it through one short-lived Redis key; a
// worker that cannot read it does not hold.
// The API's side: receiver/receiver-pressure.ts; the worker's: processing/processing-hold.ts.
import type { KeySpace } from '../core/redis/redis-keys.js';

/** How often a saturated receiver says so, and how often a worker looks. */
export const PRESSURE_TICK_MS = 50;
/** How long a receiver's word lasts: a few ticks, so a receiver that stops saying it (or dies) is soon not heard. */
export const PRESSURE_TTL_MS = 250;

/** The key a saturated receiver sets: one per deployment (its QUEUE_PREFIX), whichever API process says it. */
export const receiversSaturatedKey = (space: KeySpace): string => `${space.queuePrefix}:webhooks:receivers-saturated`;
