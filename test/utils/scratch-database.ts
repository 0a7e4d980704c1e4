import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const MIGRATIONS = path.resolve(process.cwd(), 'prisma/migrations');

/** The migration folders, oldest first (their names start with a timestamp). */
export function migrationNames(): string[] {
  return readdirSync(MIGRATIONS, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

export function migrationSql(name: string): string {
  return readFileSync(path.join(MIGRATIONS, name, 'migration.sql'), 'utf8');
}

export interface ScratchDatabase {
  url: string;
  /** A client on it (ended by drop). */
  client: pg.Client;
  /** Applies one migration folder's SQL as the migration tool does: one script, one implicit transaction. */
  migrate(name: string): Promise<void>;
  drop(): Promise<void>;
}

/**
 * A database of its own on the test server (DATABASE_URL), for tests that must not share the suite's database:
 * they drop partitions or replay migrations. `upTo`: apply the migrations before that folder (all by default).
 */
export async function scratchDatabase(upTo?: string): Promise<ScratchDatabase> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is not set: run the suite through ./scripts/test.sh');
  const name = `scratch_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const db: ScratchDatabase = {
    url: url.toString(),
    client,
    migrate: async (folder) => {
      await client.query(migrationSql(folder));
    },
    drop: async () => {
      await client.end();
      const a = new pg.Client({ connectionString: base });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
  for (const folder of migrationNames()) {
    if (upTo !== undefined && folder >= upTo) break;
    await db.migrate(folder);
  }
  return db;
}
