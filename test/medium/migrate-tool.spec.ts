import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { migrationNames, scratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';

const execFileAsync = promisify(execFile);

/** `tsx prisma/migrate.ts <args>` on `url`, as ./scripts/test.sh and the Docker image's migrate step run it. */
async function migrateTool(url: string, ...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync('node_modules/.bin/tsx', ['prisma/migrate.ts', ...args], {
      env: { ...process.env, DATABASE_URL: url },
      timeout: 170_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/**
 * prisma/migrate.ts drives Prisma's WebAssembly schema engine past its public API in four places, each marked GAP in
 * the file. A Prisma upgrade that changes what one of them patches fails here, on a database of its own: the wasm
 * module it loads, executeScript (a migration sent whole: our trigger functions hold ';' inside $$ bodies), the
 * catalogue types PostgreSQL 18 returns to introspection, and the shadow database `diff` replays the migrations on.
 */
describe('The migration tool (prisma/migrate.ts) over Prisma 7 internals', () => {
  let db: ScratchDatabase;
  const all = migrationNames();
  const one = async <T>(sql: string, values: unknown[] = []) => (await db.client.query(sql, values)).rows[0] as T;

  beforeAll(async () => {
    db = await scratchDatabase(all[0]); // an empty database: no migration applied yet
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  it('deploy applies every migration through the WebAssembly engine, each script whole (functions with ; inside)', async () => {
    const deployed = await migrateTool(db.url, 'deploy');
    expect(deployed).toMatchObject({ code: 0 });
    expect(deployed.output).toContain(`${all.length} migration(s) applied.`);
    expect(
      await one<{ n: number }>(
        'SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
      ),
    ).toEqual({ n: all.length });
    // A trigger function of the migrations, its body (several statements, each ending in ;) stored whole.
    const body = await one<{ src: string } | undefined>(
      `SELECT prosrc AS src FROM pg_proc WHERE prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql')
        AND prosrc LIKE '%;%;%' LIMIT 1`,
    );
    expect(body?.src.split(';').length).toBeGreaterThan(2);

    const status = await migrateTool(db.url, 'status');
    expect(status).toMatchObject({ code: 0 });
    expect(status.output).toContain(`Database schema is up to date (${all.length} migration(s)).`);
  }, 180_000);

  it("diff reads PostgreSQL's catalogue and replays the migrations on a shadow database it then drops", async () => {
    const tables = await one<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    const diffed = await migrateTool(db.url, 'diff');
    expect(diffed).toMatchObject({ code: 0 });
    expect(diffed.output).toContain('No drift.');
    // The shadow was a database of its own (never this one: its tables are as they were), dropped after.
    expect(await one('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', ['public'])).toEqual(tables);
    expect(
      await one<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'",
      ),
    ).toEqual({ n: 0 });
  }, 180_000);
});
