import { sql } from 'kysely';
import type { Stack } from './stack.js';

export interface Hit {
  table: string;
  column: string;
}

/**
 * Every column of every table of the database (partitions included: each is a table of its own) that holds `needle`:
 * text, varchar and arrays of them as text, json/jsonb as their text, bytea as bytes.
 */
export async function whereInDatabase(stack: Pick<Stack, 'db'>, needle: string): Promise<Hit[]> {
  const db = stack.db.on();
  const { rows: columns } = await sql<{ table: string; column: string; type: string }>`
    SELECT c.table_name AS "table", c.column_name AS "column", c.data_type AS "type"
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY')`.execute(db);
  const hits: Hit[] = [];
  for (const c of columns) {
    const column = sql.ref(c.column);
    const table = sql.table(c.table);
    const test =
      c.type === 'bytea'
        ? sql`position(convert_to(${needle}, 'UTF8') in ${column}) > 0`
        : sql`strpos(${column}::text, ${needle}) > 0`;
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ONLY ${table} WHERE ${test}`.execute(db);
    if ((rows[0]?.n ?? 0) > 0) hits.push({ table: c.table, column: c.column });
  }
  return hits;
}
