// The worker's insert into `events` and its dedupe (docs/storage.md, "Dedupe across partitions"): run by
// EventsRepository (../events.repository.ts), the table's one owner. Their SQL as PostgreSQL receives it:
// ./queries/insert.sql (`npm run db:sql` writes it).
import type { Kysely } from 'kysely';
import { EVENTS_DEDUPE_WINDOW_DAYS } from '../../core/config/app-config.js';
import { columnMap } from '../../core/db/column-map.js';
import type { Database } from '../../core/db/database.js';
import { minus, now, partitionOid, plus, typed, unnest } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';
import { dedupeKeyOf } from './index-keys.js';

/**
 * Dedupe across partitions, part 1: a transaction-level advisory lock per dedupe key, taken in one order (sorted
 * hashes), so that two transactions storing the same item (a redelivery processed by two workers, a retry racing the
 * original) run one after the other. A separate statement from the insert: under READ COMMITTED the insert's
 * snapshot is taken after the locks are held, so it sees what the other transaction committed.
 * Exported for bench/status-floor.ts, which measures these statements alone.
 */
export const lockDedupeKeys = prepared('lock_dedupe_keys', (db, p: { keys: string[] }) =>
  db
    .selectFrom((eb) =>
      eb
        .selectFrom(unnest('u', { k: 'bigint' }, { k: p.keys }))
        .select('u.k as h')
        .distinct()
        .orderBy('h')
        .as('keys'),
    )
    .select((eb) => eb.cast<number>(eb.fn.count(eb.fn('pg_advisory_xact_lock', ['keys.h'])), 'integer').as('locked')),
);

/** The dedupe probe: which of `keys` (stored keys as uuids: dedupeUuids) are stored in the window around `at`. */
const storedKeysQuery = (db: Kysely<Database>, p: { keys: string[]; at: Date | null }) =>
  db
    .selectFrom('events as s')
    .select('s.dedupe_key')
    .where((eb) =>
      eb.and([
        eb(dedupeKeyOf('s'), '=', eb.fn.any(typed(p.keys, 'uuid[]'))),
        eb(
          's.created_at',
          '>=',
          minus(eb.fn.coalesce(typed(p.at, 'timestamptz'), now()), `${EVENTS_DEDUPE_WINDOW_DAYS} days`),
        ),
        eb('s.created_at', '<', plus(eb.fn.coalesce(typed(p.at, 'timestamptz'), now()), '1 day')),
      ]),
    );

/** The dedupe probe on its own (bench/storage.ts measures it). */
export const storedKeys = prepared('events_stored_keys', storedKeysQuery);

/**
 * The events insert's columns, once (core/db/column-map.ts): each with its field in the JSON rows (EventRow) and its
 * type, or the key of the value the statement gives (created_at). The lean columns (codes, title, thinned item) come
 * encoded by the worker (statements/lean-encoding.ts).
 */
export const EVENT_INSERT = columnMap('events', {
  delivery_id: ['deliveryId', 'bigint'],
  waba_id: ['wabaId', 'text'],
  phone_number_id: ['phoneNumberId', 'text'],
  event_type: ['eventTypeCode', 'int'],
  event_type_other: ['eventTypeOther', 'text'],
  kind: ['kindCode', 'int'],
  title: ['leanTitle', 'text'],
  status: ['statusCode', 'int'],
  status_other: ['statusOther', 'text'],
  recipient: ['recipient', 'text'],
  user_id: ['userId', 'text'],
  message_id: ['messageId', 'text'],
  upstream_timestamp: ['upstreamTimestamp', 'timestamptz'],
  error_code: ['errorCode', 'int'],
  error_title: ['errorTitle', 'text'],
  error_detail: ['errorDetail', 'text'],
  raw: ['raw', 'jsonb'],
  lean: ['lean', 'int'],
  display_phone: ['displayPhone', 'bigint'],
  callback_id: ['callbackId', 'bigint'],
  dedupe_key: ['dedupeHash', 'bytea'],
  processed: ['processed', 'boolean'],
  attempts: ['attempts', 'int'],
  created_at: 'createdAt',
});

/**
 * Part 2: one statement per chunk; an item is stored unless its key is stored in the last EVENTS_DEDUPE_WINDOW_DAYS (8; in
 * whichever weekly partitions those are: the window prunes the rest, the empty ones ahead included; a day ahead
 * covers other hosts' clocks), and once if it comes twice in the chunk.
 * That makes it once-only across retries, redeliveries and workers. created_at is `at` (the caller's clock; now()
 * when null): it decides the partition. RETURNING names the rows this statement inserted, not those stored before.
 * Planned at every run: a generic plan made while the week's partition was new (before its first ANALYZE) reads the
 * whole partition for the keys on every chunk while it lives (bench/history/2026-12-04-lean-list-indexes.md).
 */
export const insertEvents = prepared(
  'insert_events',
  (db, p: { rows: string; at: Date | null; keys: string[] }) =>
    db
      .insertInto('events')
      .columns(EVENT_INSERT.columns)
      .expression(
        db
          .selectFrom(EVENT_INSERT.records('d', p.rows))
          .distinctOn('d.dedupeHash')
          .select((eb) => EVENT_INSERT.select('d', { createdAt: eb.fn.coalesce(typed(p.at, 'timestamptz'), now()) }))
          .where((eb) => eb('d.dedupeHash', 'not in', storedKeysQuery(db, p)))
          .orderBy('d.dedupeHash'),
      )
      .returning(['id', 'dedupe_key as dedupeKey', 'created_at as createdAt', partitionOid().as('partition')]),
  { planned: true },
);
