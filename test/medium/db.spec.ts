import { AppConfig } from '../../src/core/config/app-config.js';
import { Db, OUTSIDE_WITHOUT_TX } from '../../src/core/db/db.js';
import { safeInteger } from '../../src/core/db/pg-pool.js';
import { prepared } from '../../src/core/db/statement.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { metaId, recipient } from '../utils/factories.js';
import { testEnv } from '../utils/test-env.js';

/** The data access every repository stands on: prepared statements, the unit of work's transactions, int8 as numbers. */
describe('Db and UnitOfWork (PostgreSQL)', () => {
  let db: Db;
  let uow: UnitOfWork;
  beforeAll(() => {
    db = new Db(AppConfig.fromEnv(testEnv()));
    uow = new UnitOfWork(db);
  });
  afterAll(() => db.close());

  const openWindow = prepared('test_db_open_window', (q, p: { phoneNumberId: string; recipient: string; at: Date }) =>
    q
      .insertInto('conversation_windows')
      .values({ phone_number_id: p.phoneNumberId, recipient: p.recipient, waba_id: 'test', last_inbound_at: p.at }),
  );
  const windowOf = prepared('test_db_window', (q, p: { phoneNumberId: string; recipient: string }) =>
    q
      .selectFrom('conversation_windows')
      .select(['recipient', 'last_inbound_at as lastInboundAt'])
      .where('phone_number_id', '=', p.phoneNumberId)
      .where('recipient', '=', p.recipient),
  );
  const contact = () => ({ phoneNumberId: metaId(), recipient: recipient() });
  const at = new Date('2026-03-01T10:00:00.123Z');

  it('runs a prepared statement under its name, with constants of the builder kept and parameters bound per run', async () => {
    const statusOf = prepared('test_db_constants', (q, p: { n: number }) =>
      q.selectNoFrom((eb) => [eb.val(p.n).as('n'), eb.val('fixed').as('c')]),
    );
    expect(statusOf.query({ n: 7 })).toEqual({
      name: 'sql_test_db_constants',
      text: 'select $1 as "n", $2 as "c"',
      values: [7, 'fixed'],
    });
    const client = await db.pool.connect();
    try {
      const { rows } = await client.query(statusOf.query({ n: 7 }));
      expect(rows).toEqual([{ n: '7', c: 'fixed' }]);
      const { rows: prepared } = await client.query(
        `SELECT name FROM pg_prepared_statements WHERE name = 'sql_test_db_constants'`,
      );
      expect(prepared).toHaveLength(1);
    } finally {
      client.release();
    }
  });

  it('runs a planned statement unnamed', () => {
    const planned = prepared('test_db_planned', (q, p: { n: number }) => q.selectNoFrom((eb) => eb.val(p.n).as('n')), {
      planned: true,
    });
    expect(planned.query({ n: 1 })).toEqual({ text: 'select $1 as "n"', values: [1] });
  });

  it('reads int8 as a number (ids stay JSON numbers), refusing one a number cannot hold exactly', async () => {
    const rows = await db
      .on()
      .selectNoFrom((eb) => [
        eb.cast<number>(eb.val('3000000000'), 'bigint').as('id'),
        eb.fn.countAll<number>().as('n'),
      ])
      .execute();
    expect(rows).toEqual([{ id: 3000000000, n: 1 }]);
    await expect(
      db
        .on()
        .selectNoFrom((eb) => eb.cast<number>(eb.val('9007199254740993'), 'bigint').as('id'))
        .execute(),
    ).rejects.toThrow(RangeError);
    expect((await db.pool.query('SELECT 1::int8 AS one')).rows).toEqual([{ one: 1 }]); // the query failed, not the pool
  });

  it('converts a bigint or int8 text to a number only when it is a safe integer', () => {
    expect([safeInteger(3_000_000_000n), safeInteger('4294967297'), safeInteger(-1n)]).toEqual([
      3_000_000_000, 4_294_967_297, -1,
    ]);
    for (const bad of [2n ** 53n, '9007199254740993', '99999999999999999999'])
      expect(() => safeInteger(bad)).toThrow(RangeError);
  });

  it('commits every statement of a unit of work together, those given the Tx and Kysely statements joining it alike', async () => {
    const [a, b] = [contact(), contact()];
    await uow.run(async (tx) => {
      await db.exec(openWindow, { ...a, at }, tx);
      await db
        .on()
        .insertInto('conversation_windows')
        .values({ phone_number_id: b.phoneNumberId, recipient: b.recipient, waba_id: 'test', last_inbound_at: at })
        .execute();
      // Not visible outside before the commit (Db.outside: on a connection of its own, as the send path's group
      // commits run, never inside the transaction of whichever caller started a batch).
      expect((await Db.outside(() => db.exec(windowOf, a))).rows).toEqual([]);
      expect((await db.exec(windowOf, a, tx)).rows).toHaveLength(1);
    });
    expect((await db.exec(windowOf, a)).rows).toEqual([{ recipient: a.recipient, lastInboundAt: at }]);
    expect((await db.exec(windowOf, b)).rows).toEqual([{ recipient: b.recipient, lastInboundAt: at }]);
  });

  it('refuses a prepared statement run inside a unit of work without its Tx, before it runs', async () => {
    const a = contact();
    await expect(uow.run(() => db.exec(openWindow, { ...a, at }))).rejects.toThrow(OUTSIDE_WITHOUT_TX);
    await expect(
      uow.snapshot(() => db.run(db.build.selectFrom('conversation_windows').select('recipient'))),
    ).rejects.toThrow(OUTSIDE_WITHOUT_TX);
    // It would have committed on the pool, whatever became of the unit of work: nothing was written.
    expect((await db.exec(windowOf, a)).rows).toEqual([]);
  });

  it('rolls the whole unit back on an error, a nested unit of work included', async () => {
    const [a, b] = [contact(), contact()];
    const failure = new Error('the work failed');
    await expect(
      uow.run(async (tx) => {
        await db.exec(openWindow, { ...a, at }, tx);
        await uow.run(async (inner) => {
          expect(inner).toBe(tx);
          await db.exec(openWindow, { ...b, at }, inner);
        });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect((await db.exec(windowOf, a)).rows).toEqual([]);
    expect((await db.exec(windowOf, b)).rows).toEqual([]);
  });

  it('reads one snapshot in a snapshot unit of work, and refuses writes there', async () => {
    const a = contact();
    const counts = await uow.snapshot(async (tx) => {
      const before = await db.exec(windowOf, a, tx);
      // Committed by another connection meanwhile: not in the snapshot.
      await db.pool.query(openWindow.query({ ...a, at }));
      const after = await db.exec(windowOf, a, tx);
      return [before.rows.length, after.rows.length];
    });
    expect(counts).toEqual([0, 0]);
    expect((await db.exec(windowOf, a)).rows).toHaveLength(1);
    // A write given the Tx, or built with Kysely inside (it joins), runs in the snapshot, which is read-only.
    const b = contact();
    await expect(uow.snapshot((tx) => db.exec(openWindow, { ...b, at }, tx))).rejects.toMatchObject({ code: '25006' });
    const write = () =>
      db
        .on()
        .insertInto('conversation_windows')
        .values({ phone_number_id: b.phoneNumberId, recipient: b.recipient, waba_id: 'test', last_inbound_at: at })
        .execute();
    await expect(uow.snapshot(write)).rejects.toMatchObject({ code: '25006' });
    expect((await db.exec(windowOf, b)).rows).toEqual([]);
  });

  it('hands a lag-tolerant read to the read replica’s router outside a unit of work only: inside, it reads the write', async () => {
    const routed: string[] = [];
    const own = new Db(AppConfig.fromEnv(testEnv()));
    own.routeLagTolerantReads({
      read: (work) => {
        routed.push('router');
        return work(own);
      },
    });
    const windowAt = (d: Db, c: ReturnType<typeof contact>) =>
      d
        .on()
        .selectFrom('conversation_windows')
        .select('recipient')
        .where('phone_number_id', '=', c.phoneNumberId)
        .where('recipient', '=', c.recipient)
        .execute();
    try {
      const c = contact();
      await new UnitOfWork(own).run(async (tx) => {
        await own.exec(openWindow, { ...c, at }, tx);
        // Inside the write: on its transaction (the router never asked), so it sees the row not committed yet.
        expect(await own.lagTolerant((d) => windowAt(d, c))).toEqual([{ recipient: c.recipient }]);
      });
      expect(routed).toEqual([]);
      expect(await own.lagTolerant((d) => windowAt(d, c))).toEqual([{ recipient: c.recipient }]);
      expect(routed).toEqual(['router']);
    } finally {
      await own.close();
    }
  });

  it('refuses Kysely transactions: the unit of work is the one way to a transaction', async () => {
    await expect(
      db
        .on()
        .transaction()
        .execute(async () => undefined),
    ).rejects.toThrow(/UnitOfWork/);
  });
});

/**
 * A process that closes its Db must be able to exit at once: an idle connection left in the pool holds the event loop
 * for its idle timeout (30 s).
 */
describe('Db (PostgreSQL): close', () => {
  const open = () => new Db(AppConfig.fromEnv(testEnv()));

  it('ends the pools with their idle connections, and a second close does nothing', async () => {
    const db = open();
    await Promise.all([db.pool.query('SELECT 1'), db.pool.query('SELECT 2'), db.partitionReads.query('SELECT 3')]);
    expect(db.pool.idleCount).toBeGreaterThan(0);

    await db.close();
    await db.close();
    for (const pool of [db.pool, db.partitionReads]) {
      expect(pool.ended).toBe(true);
      expect(pool.totalCount).toBe(0);
    }
    await expect(db.pool.query('SELECT 1')).rejects.toThrow(/after calling end/);
  });
});
