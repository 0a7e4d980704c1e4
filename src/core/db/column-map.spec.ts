import { sql } from 'kysely';
import { columnMap } from './column-map.js';
import { builder } from './statement.js';

const map = columnMap('events', {
  delivery_id: ['deliveryId', 'bigint'],
  waba_id: ['wabaId', 'text'],
  kind: 'kindCode',
  attempts: ['attempts', 'int'],
  created_at: 'createdAt',
});

const compiled = (q: { compile(): { sql: string; parameters: readonly unknown[] } }) => q.compile();

describe('columnMap', () => {
  it('names each column once: insert columns, source types and select list follow the declaration order', () => {
    expect(map.columns).toEqual(['delivery_id', 'waba_id', 'kind', 'attempts', 'created_at']);
    expect(Object.entries(map.types)).toEqual([
      ['deliveryId', 'bigint'],
      ['wabaId', 'text'],
      ['attempts', 'int'],
    ]);
    const at = sql<Date>`now()`;
    const insert = builder
      .insertInto('events')
      .columns(map.columns)
      .expression(
        builder
          .selectFrom(map.records('d', '[]'))
          .select(() => map.select('d', { kindCode: at, createdAt: sql<Date>`clock_timestamp()` })),
      );
    expect(compiled(insert).sql).toBe(
      'insert into "events" ("delivery_id", "waba_id", "kind", "attempts", "created_at") ' +
        'select "d"."deliveryId", "d"."wabaId", now() as "kindCode", "d"."attempts", clock_timestamp() as "createdAt" ' +
        'from jsonb_to_recordset($1::jsonb) as "d"("deliveryId" bigint, "wabaId" text, "attempts" int)',
    );
  });

  it('reads the same source as arrays (unnest, with its ordinality) or as one row of typed parameters', () => {
    const arrays = builder
      .selectFrom(map.unnest('u', { deliveryId: [1], wabaId: ['w'], attempts: [0] }, 'ord'))
      .select(() => map.select('u', { kindCode: 'u.ord', createdAt: sql<Date>`now()` }));
    expect(compiled(arrays)).toEqual({
      sql:
        'select "u"."deliveryId", "u"."wabaId", "u"."ord", "u"."attempts", now() as "createdAt" ' +
        'from unnest($1::bigint[], $2::text[], $3::int[]) WITH ORDINALITY as "u"("deliveryId", "wabaId", "attempts", "ord")',
      parameters: [[1], ['w'], [0]],
      query: expect.anything(),
      queryId: expect.anything(),
    });
    const row = builder.selectNoFrom(() =>
      map.values({ deliveryId: 7, wabaId: 'w', attempts: 2 }, { kindCode: sql`null`, createdAt: sql`now()` }),
    );
    expect(compiled(row).sql).toBe(
      'select $1::bigint as "deliveryId", $2::text as "wabaId", null as "kindCode", $3::int as "attempts", now() as "createdAt"',
    );
  });

  it('reads extra source columns (a join key) before the inserted ones, and writes the rows as JSON', () => {
    const q = builder.selectFrom(map.records('d', '[]', { key: 'text' })).select('d.key');
    expect(compiled(q).sql).toBe(
      'select "d"."key" from jsonb_to_recordset($1::jsonb) as "d"("key" text, "deliveryId" bigint, "wabaId" text, "attempts" int)',
    );
    expect(JSON.parse(map.json([{ deliveryId: 1, wabaId: 'w', attempts: 0 }]))).toEqual([
      { deliveryId: 1, wabaId: 'w', attempts: 0 },
    ]);
  });

  it('writes a row of a VALUES insert by column, from parameters named after the source keys', () => {
    expect(map.keys).toEqual(['deliveryId', 'wabaId', 'attempts']);
    const insert = builder
      .insertInto('events')
      .values([0, 1].map((i) => map.row((key) => `${key}${i}`, { kindCode: null, createdAt: `at${i}` })));
    expect(compiled(insert)).toMatchObject({
      sql:
        'insert into "events" ("delivery_id", "waba_id", "kind", "attempts", "created_at") ' +
        'values ($1, $2, $3, $4, $5), ($6, $7, $8, $9, $10)',
      parameters: [
        'deliveryId0',
        'wabaId0',
        null,
        'attempts0',
        'at0',
        'deliveryId1',
        'wabaId1',
        null,
        'attempts1',
        'at1',
      ],
    });
  });

  it('is checked by the compiler: a misspelt column, a missing value or a missing row field does not compile', () => {
    // Each line below is a compile error (npm run typecheck fails if one compiles, "unused @ts-expect-error").
    // @ts-expect-error: `delivery_idd` is no column of events
    columnMap('events', { delivery_idd: ['deliveryId', 'bigint'] });
    // @ts-expect-error: a column of another table
    columnMap('events', { business_account_id: ['b', 'uuid'] });
    // @ts-expect-error: `createdAt` is given by the statement and missing here
    expect(() => map.select('d', { kindCode: sql`now()` })).toThrow(TypeError);
    // @ts-expect-error: a row without `attempts`
    expect(map.json([{ deliveryId: 1, wabaId: 'w' }])).toBe('[{"deliveryId":1,"wabaId":"w"}]');
  });
});
