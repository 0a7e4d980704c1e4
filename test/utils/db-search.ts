import { sql } from 'kysely';
import type { Stack } from './stack.js';

export interface Hit {
  table: string;
  column: string;
}

/**
 * Every column of every table of the database (partitions included: each is a table of its own) that holds `needle`:
 * text, varchar and arrays of them as text, json/jsonb as their text, bytea as bytes. One scan per table (all its
 * columns tested in it), so that it stays usable on a bench's database of millions of rows.
 */
export async function whereInDatabase(stack: Pick<Stack, 'db'>, needle: string): Promise<Hit[]> {
  const db = stack.db.on();
  const { rows: columns } = await sql<{ table: string; column: string; type: string }>`
    SELECT c.table_name AS "table", c.column_name AS "column", c.data_type AS "type"
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY')
    ORDER BY c.table_name, c.ordinal_position`.execute(db);
  const byTable = new Map<string, { column: string; type: string }[]>();
  for (const c of columns) byTable.set(c.table, [...(byTable.get(c.table) ?? []), c]);
  const hits: Hit[] = [];
  for (const [table, cols] of byTable) {
    const tests = cols.map((c) => {
      const column = sql.ref(c.column);
      const test =
        c.type === 'bytea'
          ? sql`position(convert_to(${needle}, 'UTF8') in ${column}) > 0`
          : sql`strpos(${column}::text, ${needle}) > 0`;
      return sql`COALESCE(bool_or(${test}), false)`;
    });
    const { rows } = await sql<{
      found: boolean[];
    }>`SELECT ARRAY[${sql.join(tests)}] AS found FROM ONLY ${sql.table(table)}`.execute(db);
    rows[0]?.found.forEach((f, i) => {
      if (f) hits.push({ table, column: cols[i]!.column });
    });
  }
  return hits;
}
