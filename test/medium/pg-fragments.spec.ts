import { sql } from 'kysely';
import { AppConfig } from '../../src/core/config/app-config.js';
import { Db } from '../../src/core/db/db.js';
import {
  bytesAsUuid,
  bytesContain,
  equalsByHash,
  inByHash,
  jsonRecords,
  minus,
  now,
  plus,
  snapshotHorizon,
  typed,
  unnest,
  utcBucket,
  utcBuckets,
} from '../../src/core/db/pg.js';
import { testEnv } from '../utils/test-env.js';

/**
 * src/core/db/pg.ts holds the only SQL text of the data access (the PostgreSQL constructs Kysely has no builder for).
 * Each fragment runs here against PostgreSQL, so a fragment whose SQL or declared row type is wrong fails in CI
 * rather than in the repository that uses it.
 */
describe('PostgreSQL fragments of the data access (src/core/db/pg.ts)', () => {
  let db: Db;
  beforeAll(() => {
    db = new Db(AppConfig.fromEnv(testEnv()));
  });
  afterAll(() => db.close());

  it('unnest reads parallel arrays as rows, typed per column, in order with their ordinality', async () => {
    const ids = ['7d5c3a8e-0b7a-4a55-9d3e-2f1e7b8c9a01', '0f0e0d0c-0b0a-4909-8807-060504030201'];
    const at = [new Date('2026-03-01T10:00:00.123Z'), new Date('2026-03-02T11:30:00.000Z')];
    const rows = await db
      .on()
      .selectFrom(
        unnest(
          'u',
          { id: 'uuid', n: 'bigint', at: 'timestamptz', ok: 'boolean', note: 'text' },
          { id: ids, n: [9_007_199_254_740_991, 2], at, ok: [true, null], note: ['a', null] },
          'ord',
        ),
      )
      .selectAll()
      .orderBy('ord')
      .execute();
    expect(rows).toEqual([
      { id: ids[0], n: 9_007_199_254_740_991, at: at[0], ok: true, note: 'a', ord: 1 },
      { id: ids[1], n: 2, at: at[1], ok: null, note: null, ord: 2 },
    ]);
  });

  it('jsonRecords reads the objects of one JSON parameter as typed rows (missing keys are null)', async () => {
    const rows = await db
      .on()
      .selectFrom(
        jsonRecords(
          'r',
          { id: 'text', count: 'int', at: 'timestamptz', body: 'jsonb' },
          JSON.stringify([{ id: 'x', count: 3, at: '2026-03-01T10:00:00Z', body: { a: [1] } }, { id: 'y' }]),
        ),
      )
      .selectAll()
      .execute();
    expect(rows).toEqual([
      { id: 'x', count: 3, at: new Date('2026-03-01T10:00:00Z'), body: { a: [1] } },
      { id: 'y', count: null, at: null, body: null },
    ]);
  });

  it('typed casts a parameter where PostgreSQL cannot infer its type, arrays included', async () => {
    const row = await db
      .on()
      .selectNoFrom([
        typed(['b', 'a'], 'text[]').as('names'),
        typed(42, 'bigint').as('n'),
        typed('2026-03-01T10:00:00Z', 'timestamptz').as('at'),
      ])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ names: ['b', 'a'], n: 42, at: new Date('2026-03-01T10:00:00Z') });
  });

  it('snapshotHorizon is a transaction id no later than the current one: every transaction below it has ended', async () => {
    const row = await db
      .on()
      .selectFrom(snapshotHorizon('s'))
      .select((eb) => [
        eb.cast<string>('s.horizon', 'text').as('horizon'),
        eb.cast<string>(eb.fn('pg_current_xact_id', []), 'text').as('current'),
      ])
      .executeTakeFirstOrThrow();
    expect(row.horizon).toMatch(/^\d+$/);
    expect(BigInt(row.horizon)).toBeLessThanOrEqual(BigInt(row.current));
  });

  it('minus and plus move a timestamp by a constant span; now() is the same instant for a whole transaction', async () => {
    const at = new Date('2026-03-01T10:00:00.000Z');
    const row = await db
      .on()
      .selectNoFrom([
        minus(typed(at, 'timestamptz'), '2 days').as('before'),
        plus(typed(at, 'timestamptz'), '3 hours').as('after'),
      ])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ before: new Date('2026-02-27T10:00:00.000Z'), after: new Date('2026-03-01T13:00:00.000Z') });

    const instants = await db.transaction(async (tx) => {
      const first = await db.on(tx).selectNoFrom(now().as('at')).executeTakeFirstOrThrow();
      await db
        .on(tx)
        .selectNoFrom((eb) => eb.fn('pg_sleep', [eb.val(0.02)]).as('slept'))
        .execute();
      const second = await db.on(tx).selectNoFrom(now().as('at')).executeTakeFirstOrThrow();
      return [first.at, second.at];
    });
    expect(instants[0]).toBeInstanceOf(Date);
    expect(instants[1]).toEqual(instants[0]);
  });

  it('utcBucket puts a timestamp in its UTC hour or day whatever the session time zone', async () => {
    const rows = await db.transaction(async (tx) => {
      await db
        .on(tx)
        .selectNoFrom((eb) =>
          eb.fn('set_config', [eb.val('TimeZone'), eb.val('America/Los_Angeles'), eb.lit(true)]).as('tz'),
        )
        .execute();
      return db
        .on(tx)
        .selectFrom(
          unnest(
            't',
            { at: 'timestamptz' },
            { at: [new Date('2026-03-01T02:42:10Z'), new Date('2026-03-01T23:59:59Z')] },
          ),
        )
        .select([utcBucket('hour', 'at').as('hour'), utcBucket('day', 'at').as('day')])
        .execute();
    });
    expect(rows).toEqual([
      { hour: new Date('2026-03-01T02:00:00Z'), day: new Date('2026-03-01T00:00:00Z') },
      { hour: new Date('2026-03-01T23:00:00Z'), day: new Date('2026-03-01T00:00:00Z') },
    ]);
  });

  it('utcBuckets lists every UTC day or hour from the one of `since` to `until`, both ends included', async () => {
    const days = await db
      .on()
      .selectNoFrom(utcBuckets('day', new Date('2026-02-27T18:00:00Z'), new Date('2026-03-01T01:00:00Z')).as('bucket'))
      .execute();
    expect(days.map((d) => d.bucket)).toEqual([
      new Date('2026-02-27T00:00:00Z'),
      new Date('2026-02-28T00:00:00Z'),
      new Date('2026-03-01T00:00:00Z'),
    ]);
    const hours = await db
      .on()
      .selectNoFrom(utcBuckets('hour', new Date('2026-03-01T10:59:00Z'), new Date('2026-03-01T12:00:00Z')).as('bucket'))
      .execute();
    expect(hours.map((h) => h.bucket)).toEqual([
      new Date('2026-03-01T10:00:00Z'),
      new Date('2026-03-01T11:00:00Z'),
      new Date('2026-03-01T12:00:00Z'),
    ]);
  });

  it('bytesContain finds bytes anywhere in a bytea value, and only those bytes', async () => {
    const body = Buffer.from('{"from":"447700900456","text":{"body":"héllo"}}');
    const found = async (needle: string) => {
      const row = await db
        .on()
        .selectFrom(db.on().selectNoFrom(typed(body, 'bytea').as('b')).as('t'))
        .select(bytesContain('t.b', Buffer.from(needle)).as('hit'))
        .executeTakeFirstOrThrow();
      return row.hit;
    };
    expect(await found('447700900456')).toBe(true);
    expect(await found('héllo')).toBe(true);
    expect(await found('447700900457')).toBe(false);
  });

  it('equalsByHash and inByHash match exactly the equal texts, and are searched by an index on the hash', async () => {
    const values = ['310000000000001', '310000000000002', 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAERgSQzA2RjI1QjQ0'];
    await db.transaction(async (tx) => {
      await sql`CREATE TEMP TABLE hashed (v text) ON COMMIT DROP`.execute(db.on(tx));
      await sql`INSERT INTO hashed SELECT 'x' || g FROM generate_series(1, 2000) g`.execute(db.on(tx));
      await sql`INSERT INTO hashed SELECT unnest(${values}::text[])`.execute(db.on(tx));
      await sql`CREATE INDEX ON hashed (hashtextextended(v, 0))`.execute(db.on(tx));
      await sql`ANALYZE hashed`.execute(db.on(tx));
      const hashed = db.on(tx).selectFrom(sql<{ v: string }>`hashed`.as('h'));
      const equal = hashed.select('h.v').where(equalsByHash('h.v', values[0]));
      expect(await equal.execute()).toEqual([{ v: values[0] }]);
      expect(await hashed.select('h.v').where(equalsByHash('h.v', '31000000000000')).execute()).toEqual([]);
      const any = hashed
        .select('h.v')
        .where(inByHash('h.v', [values[1]!, values[2]!, 'absent']))
        .orderBy('h.v');
      expect(await any.execute()).toEqual([{ v: values[1] }, { v: values[2] }]);
      for (const statement of [equal, any]) {
        const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (GENERIC_PLAN) ${sql.raw(
          statement.compile().sql,
        )}`.execute(db.on(tx));
        expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan|Bitmap Index Scan/);
      }
    });
  });

  it('bytesAsUuid reads 16 bytes as the uuid of the same 32 hex digits', async () => {
    const bytes = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const row = await db
      .on()
      .selectFrom(db.on().selectNoFrom(typed(bytes, 'bytea').as('b')).as('t'))
      .select(bytesAsUuid('t.b').as('u'))
      .executeTakeFirstOrThrow();
    expect(row.u).toBe('00112233-4455-6677-8899-aabbccddeeff');
  });
});
