import { AppConfig } from '../../src/core/config/app-config.js';
import { Db } from '../../src/core/db/db.js';
import { PrismaService, safeInteger } from '../../src/core/prisma/prisma.service.js';
import { testEnv } from '../utils/test-env.js';

/**
 * A process that closes its PrismaService must be able to exit at once: an idle connection left in the pool
 * holds the event loop for its idle timeout (30 s), whichever of Prisma's client or the SQL hot paths used it.
 */
describe('PrismaService (PostgreSQL): close', () => {
  const open = () => new PrismaService(new Db(AppConfig.fromEnv(testEnv())));

  it("ends the pool after SQL on the pool alone, when Prisma's own client never connected", async () => {
    const prisma = open();
    await Promise.all([prisma.pool.query('SELECT 1'), prisma.pool.query('SELECT 2')]);
    expect(prisma.pool.idleCount).toBeGreaterThan(0);

    await prisma.close();
    expect(prisma.pool.ended).toBe(true);
    expect(prisma.pool.totalCount).toBe(0);
    await expect(prisma.pool.query('SELECT 1')).rejects.toThrow(/after calling end/);
  });

  it("ends the pool after queries through Prisma's client too, and a second close does nothing", async () => {
    const prisma = open();
    expect(await prisma.$queryRaw`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    await prisma.pool.query('SELECT 1');

    await prisma.close();
    await prisma.close();
    expect(prisma.pool.ended).toBe(true);
    expect(prisma.pool.totalCount).toBe(0);
  });
});

/** Ids are 64-bit: our SQL on the pool reads int8 as a number, refusing what a number cannot hold exactly. */
describe('PrismaService (PostgreSQL): int8', () => {
  let prisma: PrismaService;
  beforeAll(() => {
    prisma = new PrismaService(new Db(AppConfig.fromEnv(testEnv())));
  });
  afterAll(() => prisma.close());

  it('reads int8 on the pool as a number (ids above 2^31 and 2^32, count(*))', async () => {
    const { rows } = await prisma.pool.query(
      'SELECT 3000000000::int8 AS a, 4294967297::int8 AS b, 9007199254740991::int8 AS max, -5::int8 AS neg, count(*) AS n FROM generate_series(1, 3)',
    );
    expect(rows).toEqual([{ a: 3_000_000_000, b: 4_294_967_297, max: Number.MAX_SAFE_INTEGER, neg: -5, n: 3 }]);
  });

  it('fails the query, not the pool, on an int8 beyond 2^53 - 1, instead of rounding it to another id', async () => {
    await expect(prisma.pool.query('SELECT 9007199254740993::int8 AS id')).rejects.toThrow(
      /9007199254740993 is beyond Number.MAX_SAFE_INTEGER/,
    );
    expect((await prisma.pool.query('SELECT 1::int8 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it("leaves Prisma's client alone: BigInt fields and int8 results stay bigint there (its adapter brings its own parsers)", async () => {
    expect(await prisma.$queryRaw`SELECT 3000000000::int8 AS n`).toEqual([{ n: 3_000_000_000n }]);
  });

  it('converts a bigint or int8 text to a number only when it is a safe integer', () => {
    expect([safeInteger(3_000_000_000n), safeInteger('4294967297'), safeInteger(-1n)]).toEqual([
      3_000_000_000, 4_294_967_297, -1,
    ]);
    for (const bad of [2n ** 53n, '9007199254740993', '99999999999999999999'])
      expect(() => safeInteger(bad)).toThrow(RangeError);
  });
});
