import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { Database } from '../../../core/db/database.js';
import { typed, unnest } from '../../../core/db/pg.js';
import { prepared } from '../../../core/db/statement.js';
import type { DeliveryStatus } from '../dto/deliveries.dto.js';

// The console's statements over webhook deliveries (WebhookDeliveriesRepository runs them): the list and its count,
// the replay and the backlog per account, each scoped by the reader's business accounts and their windows. A delivery
// is in `webhook_inbox` (waiting, dead letters) or `webhook_deliveries` (processed): docs/storage.md, "The inbox".

export interface DeliveryRow {
  id: number;
  status: string;
  attempts: number;
  lastError: string | null;
  eventCount: number | null;
  wabaIds: string[];
  receivedAt: Date;
  processedAt: Date | null;
}

type Eb = ExpressionBuilder<Database, 'webhook_deliveries'>;
type InboxEb = ExpressionBuilder<Database, 'webhook_inbox'>;

/**
 * receivedAt: when Meta delivered it (original_received_at when it was stored later in a newer partition: processed
 * more than a day after it arrived, or moved by the retention of an older version).
 */
const receivedAt = (eb: Eb | InboxEb) => (eb as Eb).fn.coalesce('original_received_at', 'received_at');
/** A delivery's row as the console reads it, but processed_at: the same column names in both tables. */
const baseColumns = (eb: Eb | InboxEb) =>
  [
    'id',
    'status',
    'attempts',
    'last_error as lastError',
    'event_count as eventCount',
    'waba_ids as wabaIds',
    receivedAt(eb).as('receivedAt'),
  ] as const;
const rowColumns = (eb: Eb) => [...baseColumns(eb), 'processed_at as processedAt'] as const;
/** The same for a delivery in the inbox (not processed: no processed_at). */
const inboxRowColumns = (eb: InboxEb) =>
  [...baseColumns(eb), typed(null, 'timestamptz').$castTo<Date | null>().as('processedAt')] as const;

/** The organization's accounts (wabaIds) with, per account, the window its holder may read (since, until; null: open). */
interface Windows {
  wabaIds: string[];
  since: (Date | null)[];
  until: (Date | null)[];
}

/**
 * A delivery is listed when it concerns one of the accounts and arrived inside that account's window. The same
 * columns in both tables (the inbox's are named as the weekly table's).
 */
function inWindows(inboxOrWeekly: Eb | InboxEb, p: Windows): Expression<SqlBool> {
  const eb = inboxOrWeekly as Eb;
  return eb.and([
    eb('waba_ids', '&&', typed(p.wabaIds, 'text[]')),
    eb.exists(
      eb
        .selectFrom(
          unnest(
            'a',
            { waba: 'text', since: 'timestamptz', until: 'timestamptz' },
            { waba: p.wabaIds, since: p.since, until: p.until },
          ),
        )
        .select((eb) => eb.lit(1).as('one'))
        .where((eb) =>
          eb.and([
            eb('a.waba', '=', eb.fn.any('waba_ids')),
            eb(
              eb.fn.coalesce('original_received_at', 'received_at'),
              '>=',
              eb.fn.coalesce('a.since', typed('-infinity', 'timestamptz')),
            ),
            eb(
              eb.fn.coalesce('original_received_at', 'received_at'),
              '<=',
              eb.fn.coalesce('a.until', typed('infinity', 'timestamptz')),
            ),
          ]),
        ),
    ),
  ]);
}

export type ListParams = Windows & { skip: number; take: number; status: string | undefined };

/**
 * Which table a list reads: `received` and `failed` deliveries are in the inbox, `processed` ones in the weekly table,
 * all of them in both.
 */
type ListShape = 'all' | 'waiting' | 'processed';
export const shapeOf = (status: DeliveryStatus | undefined): ListShape =>
  status === undefined ? 'all' : status === 'processed' ? 'processed' : 'waiting';

function rowsOf(db: Kysely<Database>, shape: ListShape, p: ListParams) {
  const waiting = db
    .selectFrom('webhook_inbox')
    .select(inboxRowColumns)
    .where((eb) =>
      eb.and([inWindows(eb, p), ...(shape === 'waiting' ? [eb('status', '=', typed(p.status, 'text'))] : [])]),
    );
  const processed = db
    .selectFrom('webhook_deliveries')
    .select(rowColumns)
    .where((eb) => inWindows(eb, p));
  // One row type either side (DeliveryRow): the inbox's builder names it.
  const rows =
    shape === 'waiting'
      ? waiting
      : shape === 'processed'
        ? (processed as unknown as typeof waiting)
        : waiting.unionAll(processed);
  return rows.as('d');
}

function listStatement(shape: ListShape) {
  return prepared(`list_deliveries_${shape}`, (db, p: ListParams) =>
    db
      .selectFrom(rowsOf(db, shape, p))
      .selectAll()
      .orderBy('receivedAt', 'desc')
      .orderBy('id', 'desc')
      .offset(p.skip)
      .limit(p.take),
  );
}
function countStatement(shape: ListShape) {
  return prepared(`count_deliveries_${shape}`, (db, p: ListParams) =>
    db.selectFrom(rowsOf(db, shape, p)).select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n')),
  );
}
const SHAPES = ['all', 'waiting', 'processed'] as const;
export const listForAccounts = Object.fromEntries(SHAPES.map((s) => [s, listStatement(s)])) as Record<
  ListShape,
  ReturnType<typeof listStatement>
>;
export const countForAccounts = Object.fromEntries(SHAPES.map((s) => [s, countStatement(s)])) as Record<
  ListShape,
  ReturnType<typeof countStatement>
>;

/** A dead letter (or a delivery still waiting) replayed: back to `received` in the inbox. */
export const replayWaiting = prepared('replay_waiting_delivery', (db, p: Windows & { id: number }) =>
  db
    .updateTable('webhook_inbox')
    .set({ status: 'received', attempts: 0, last_error: null })
    .where((eb) => eb.and([inWindows(eb, p), eb('id', '=', typed(p.id, 'bigint'))]))
    .returning(inboxRowColumns),
);

/** The columns a processed delivery takes back into the inbox when replayed (the others start afresh). */
const REPLAYED = [
  'id',
  'raw_body',
  'signature',
  'waba_ids',
  'event_count',
  'received_at',
  'original_received_at',
  'redacted_at',
] as const;
/**
 * A processed delivery replayed: moved back into the inbox, `received`, with its id, its times and its event_count
 * (its bytes went when it was processed: its items are in `events`, and the processor re-applies what is left).
 */
export const replayProcessed = prepared('replay_processed_delivery', (db, p: Windows & { id: number }) =>
  db
    .with('moved', (db) =>
      db
        .deleteFrom('webhook_deliveries')
        .where((eb) => eb.and([inWindows(eb, p), eb('id', '=', typed(p.id, 'bigint'))]))
        .returning(REPLAYED),
    )
    .insertInto('webhook_inbox')
    .columns(REPLAYED)
    .expression((eb) => eb.selectFrom('moved').select(REPLAYED))
    .returning(inboxRowColumns),
);

/**
 * Backlog per business account: deliveries waiting (`received`), dead letters (`failed`) and the oldest
 * waiting one: the inbox only, whatever the retention.
 */
export const backlogForAccounts = prepared('deliveries_backlog_for_accounts', (db, p: { wabaIds: string[] }) =>
  db
    .selectFrom('webhook_inbox as d')
    .crossJoinLateral((eb) => unnest('w', { waba: 'text' }, { waba: eb.ref('d.waba_ids') }))
    .select((eb) => [
      eb.ref('w.waba').$notNull().as('wabaId'),
      eb.cast<number>(eb.fn.countAll().filterWhere('d.status', '=', 'received'), 'integer').as('pending'),
      eb.cast<number>(eb.fn.countAll().filterWhere('d.status', '=', 'failed'), 'integer').as('failed'),
      eb.fn.min('d.received_at').filterWhere('d.status', '=', 'received').as('oldestPendingAt'),
    ])
    .where((eb) =>
      eb.and([
        eb('d.waba_ids', '&&', typed(p.wabaIds, 'text[]')),
        eb('w.waba', '=', eb.fn.any(typed(p.wabaIds, 'text[]'))),
      ]),
    )
    .groupBy('w.waba'),
);

/** A business account of the reader and the window of its history the reader may see (accounts/business-accounts/read-window.ts). */
export interface AccountWindow {
  wabaId: string;
  since?: Date;
  until?: Date;
}

export function windowsOf(accounts: AccountWindow[]): Windows {
  return {
    wabaIds: accounts.map((a) => a.wabaId),
    since: accounts.map((a) => a.since ?? null),
    until: accounts.map((a) => a.until ?? null),
  };
}
