// Offline migration entry point: `tsx prisma/migrate.ts dev <name> | deploy | status | diff`.
//
// Why it exists: every Prisma 7 CLI migrate command first downloads a native schema engine from Prisma's
// binary host, which this project's machines cannot reach. The same engine ships as WebAssembly
// (@prisma/schema-engine-wasm) and talks to PostgreSQL through the @prisma/adapter-pg driver adapter, so we
// drive it through @prisma/migrate's own Migrate and SchemaEngineWasm classes. Migration folders, the
// lock file and the `_prisma_migrations` table are Prisma's own, so the stock `prisma migrate deploy`
// (e.g. in a Docker build with network) sees exactly the same state.
//
// Versions are pinned (@prisma/migrate, @prisma/internals, @prisma/adapter-pg all 7.10.0): the code below
// reaches past public APIs in a few places, each marked "GAP".
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory, ColumnTypeEnum } from '@prisma/driver-adapter-utils';
import * as wasmRuntime from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';

// @prisma/migrate is CommonJS and its package.json "types" points at a file it does not ship, so load the
// entry files with require() and take their types from the declarations it does ship (dist/src/...).
const require = createRequire(import.meta.url);
const { Migrate } = require('@prisma/migrate/dist/Migrate.js') as typeof import('@prisma/migrate/dist/src/Migrate.js');
const { SchemaEngineWasm } =
  require('@prisma/migrate/dist/SchemaEngineWasm.js') as typeof import('@prisma/migrate/dist/src/SchemaEngineWasm.js');
const { listMigrations } =
  require('@prisma/migrate/dist/utils/listMigrations.js') as typeof import('@prisma/migrate/dist/src/utils/listMigrations.js');
type MigrateT = import('@prisma/migrate/dist/src/Migrate.js').Migrate;
type SchemaEngineWasmT = import('@prisma/migrate/dist/src/SchemaEngineWasm.js').SchemaEngineWasm;

const prismaDir = path.dirname(fileURLToPath(import.meta.url));
const schemaPath = path.join(prismaDir, 'schema.prisma'); // same paths as prisma.config.ts
const migrationsDir = path.join(prismaDir, 'migrations');
const USAGE = 'usage: tsx prisma/migrate.ts dev <name> [--force] | deploy | status | diff';

type PgAdapter = Awaited<ReturnType<PrismaPg['connect']>>;
const pools = new Set<pg.Pool>(); // every pool we open, so that each command ends them all and exits at once
const pendingDrops = new Map<string, () => Promise<void>>(); // shadow databases not yet dropped

/** PrismaPg with the fixes the schema engine needs (adapter-pg 7.10 is built for the client, not for it). */
class MigratePg extends PrismaPg {
  constructor(private readonly poolConfig: pg.PoolConfig) {
    super(poolConfig);
  }

  override async connect(): Promise<PgAdapter> {
    const adapter = await super.connect();
    pools.add(adapter.underlyingDriver());
    patchCatalogTypes(adapter);
    // GAP: adapter-pg's executeScript splits the script on ';' and runs each piece on its own, which
    // breaks on ';' inside literals or function bodies and leaves half-applied migrations behind. The native
    // engine sends the whole script as one simple query (one implicit transaction); do the same. No
    // parameters means node-postgres uses the simple-query protocol, which accepts several statements.
    adapter.executeScript = async (script) => {
      await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
    };
    return adapter;
  }

  // GAP: the stock version opens the shadow pool with {...config, database}, but a connectionString in
  // config wins over `database` (the "shadow" silently becomes the real database; we only ever pass
  // discrete fields), drops the database while its pool is still connected ("is being accessed by other
  // users"), and never closes the pool it used for CREATE/DROP DATABASE.
  override async connectToShadowDb(): Promise<PgAdapter> {
    const admin = await this.connect();
    const database = `prisma_migrate_shadow_db_${randomUUID()}`;
    await admin.executeScript(`CREATE DATABASE "${database}"`);
    let shadowPool: pg.Pool | undefined;
    const dispose = async () => {
      pendingDrops.delete(database);
      try {
        if (shadowPool && !shadowPool.ended) await shadowPool.end(); // close first, then drop
        await admin.executeScript(`DROP DATABASE IF EXISTS "${database}"`);
      } finally {
        await admin.dispose();
      }
    };
    pendingDrops.set(database, dispose); // dropped at exit even if the engine never disposes it
    const shadow = await new MigratePg({ ...this.poolConfig, database }).connect();
    shadowPool = shadow.underlyingDriver();
    shadow.dispose = dispose;
    return shadow;
  }
}

// GAP: the engine's catalog queries return Postgres' internal "char" (OID 18) and name (OID 19) columns.
// adapter-pg refuses "char" ("Column type 'char' could not be deserialized"), so its text-format values
// (plain strings) are passed as text (OID 25) — and the "char" ones then labelled Character, because the
// engine reads e.g. pg_constraint.contype as a char and panics on text. That matters on PostgreSQL 18, which
// lists every NOT NULL as a constraint (contype 'n'), so any table makes introspection (diff, dev) panic
// (prisma/orm#29635). performIO is where adapter-pg gets pg's field list, queryRaw where it returns the
// column types; both are patched once on the PgQueryable prototype so that transactions are covered too.
const patched = Symbol('migrate.catalogTypes');
const charColumns = new WeakMap<object, number[]>(); // rows array of a result -> indexes of its "char" columns
function patchCatalogTypes(adapter: PgAdapter): void {
  type Fields = { fields?: { dataTypeID: number }[]; rows: object };
  type Proto = {
    performIO?: (this: unknown, query: unknown) => Promise<Fields>;
    queryRaw?: (this: unknown, query: unknown) => Promise<{ columnTypes: number[]; rows: object }>;
    [patched]?: true;
  };
  const proto = Object.getPrototypeOf(Object.getPrototypeOf(adapter)) as Proto;
  const { performIO, queryRaw } = proto;
  if (proto[patched]) return;
  if (typeof performIO !== 'function' || typeof queryRaw !== 'function') {
    throw new Error('@prisma/adapter-pg changed: PgQueryable.performIO/queryRaw not found');
  }
  proto.performIO = async function (query) {
    const result = await performIO.call(this, query);
    if (!Array.isArray(result.fields)) return result; // a multi-statement script returns an array of results
    const chars = result.fields.flatMap((field, i) => (field.dataTypeID === 18 ? [i] : []));
    for (const field of result.fields) if (field.dataTypeID === 18 || field.dataTypeID === 19) field.dataTypeID = 25;
    if (chars.length > 0) charColumns.set(result.rows, chars);
    return result;
  };
  proto.queryRaw = async function (query) {
    const result = await queryRaw.call(this, query);
    for (const i of charColumns.get(result.rows) ?? []) result.columnTypes[i] = ColumnTypeEnum.Character;
    return result;
  };
  proto[patched] = true;
}

// GAP: SchemaEngineWasm.setup() loads the .wasm from @prisma/internals/build/, which only exists inside the
// bundled `prisma` CLI. Instantiate the module shipped by @prisma/schema-engine-wasm itself (the same
// steps as internals' WasmSchemaEngineLoader) and use the class's (TS-private) constructor.
// WebAssembly is a Node global, but the project's lib (es2023, no DOM) does not declare it.
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

async function startEngine(schemaFiles: [string, string][], databaseUrl: string): Promise<SchemaEngineWasmT> {
  const wasmDir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
  const wasmPath = path.join(wasmDir, 'schema_engine_bg.wasm');
  const instance = new Wasm.Instance(new Wasm.Module(await readFile(wasmPath)), {
    './schema_engine_bg.js': wasmRuntime,
  });
  wasmRuntime.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();

  // Discrete fields (host, port, user, password, database, ssl), never a connectionString: see connectToShadowDb.
  const poolConfig = { ...parseIntoClientConfig(databaseUrl), connectionTimeoutMillis: 10_000 } as pg.PoolConfig;
  const adapter = bindMigrationAwareSqlAdapterFactory(new MigratePg(poolConfig));
  const log = (line: string) => process.env.DEBUG && process.stderr.write(`${line}\n`);
  const engine = await wasmRuntime.SchemaEngine.new({ datamodels: schemaFiles }, log, adapter);
  const Ctor = SchemaEngineWasm as unknown as new (o: object) => SchemaEngineWasmT;
  return new Ctor({ engine, errorRegistry: adapter.errorRegistry });
}

async function dev(migrate: MigrateT, args: string[]): Promise<number> {
  const rawName = args.find((a) => !a.startsWith('--'));
  // Same shape as Prisma's prompt (slugified, '_'-separated); the engine prefixes the UTC timestamp.
  const name = rawName
    ?.toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 200);
  if (!name) return fail(`dev needs a migration name.\n${USAGE}`);

  // Same sequence as `prisma migrate dev` (MigrateDev.ts): diagnose, apply pending, check data loss, create, apply.
  const { action } = await migrate.devDiagnostic();
  if (action.tag === 'reset') {
    return fail(
      `${action.reason}\nThe development database must be reset (drop and recreate it). Nothing was changed.`,
    );
  }
  for (const id of (await migrate.applyMigrations()).appliedMigrationNames)
    console.log(`Applied pending migration ${id}`);

  const loss = await migrate.evaluateDataLoss();
  if (loss.unexecutableSteps.length > 0) {
    const steps = loss.unexecutableSteps.map((s) => `  - ${s.message}`).join('\n');
    return fail(`The change cannot be executed on this database:\n${steps}`);
  }
  if (loss.warnings.length > 0) {
    console.log(`Warnings for the current database:\n${loss.warnings.map((w) => `  - ${w.message}`).join('\n')}`);
    if (!args.includes('--force'))
      return fail('Not creating the migration: re-run with --force to accept these warnings.');
  }

  // Writes prisma/migrations/<timestamp>_<name>/migration.sql and migration_lock.toml, or nothing when the
  // schema matches the migrations (replayed on a shadow database).
  const { generatedMigrationName } = await migrate.createMigration({
    migrationName: name,
    draft: false,
    schema: migrate.getPrismaSchema(),
  });
  if (!generatedMigrationName) {
    console.log('No schema change: schema.prisma matches the migrations. Nothing written.');
    return 0;
  }
  console.log(`Created prisma/migrations/${generatedMigrationName}/migration.sql`);
  for (const id of (await migrate.applyMigrations()).appliedMigrationNames) console.log(`Applied ${id}`);
  console.log('The database is now in sync with the schema.');
  return 0;
}

async function deploy(migrate: MigrateT): Promise<number> {
  // The engine refuses (P3009) when a failed migration is recorded, as `prisma migrate deploy` does.
  const { appliedMigrationNames } = await migrate.applyMigrations();
  for (const id of appliedMigrationNames) console.log(`Applied ${id}`);
  console.log(
    appliedMigrationNames.length
      ? `${appliedMigrationNames.length} migration(s) applied.`
      : 'No pending migrations to apply.',
  );
  return 0;
}

async function status(migrate: MigrateT): Promise<number> {
  const local = (await migrate.listMigrationDirectories()).migrations;
  const d = await migrate.diagnoseMigrationHistory({ optInToShadowDatabase: false });
  const h = d.history;
  const pending = new Set(h && h.diagnostic !== 'migrationsDirectoryIsBehind' ? h.unappliedMigrationNames : []);
  const failed = new Set(d.failedMigrationNames);
  const missing = h && h.diagnostic !== 'databaseIsBehind' ? h.unpersistedMigrationNames : [];
  for (const id of local) {
    console.log(`${failed.has(id) ? 'failed ' : pending.has(id) ? 'pending' : 'applied'}  ${id}`);
  }
  for (const id of missing) console.log(`missing  ${id} (in _prisma_migrations, not in prisma/migrations)`);
  for (const id of d.editedMigrationNames) console.log(`warning: ${id} was edited after it was applied`);
  if (!d.hasMigrationsTable) console.log('The database has no _prisma_migrations table yet.');
  const ok = pending.size === 0 && failed.size === 0 && missing.length === 0;
  console.log(ok ? `Database schema is up to date (${local.length} migration(s)).` : 'The database is not up to date.');
  return ok ? 0 : 1;
}

async function diff(engine: SchemaEngineWasmT, schemaFiles: [string, string][]): Promise<number> {
  // Migrations replayed on a shadow database vs schema.prisma, as
  // `prisma migrate diff --from-migrations prisma/migrations --to-schema prisma/schema.prisma --script --exit-code`.
  // SchemaEngineWasm.migrateDiff prints the SQL to stdout itself; exitCode is 2 when there is a difference.
  const migrations = await listMigrations(migrationsDir, '');
  const { exitCode } = await engine.migrateDiff({
    from: migrations.migrationDirectories.length > 0 ? { tag: 'migrations', ...migrations } : { tag: 'empty' },
    to: { tag: 'schemaDatamodel', files: schemaFiles.map(([p, content]) => ({ path: p, content })) },
    script: true,
    exitCode: true,
    filters: { externalTables: [], externalEnums: [] },
  });
  console.error(exitCode === 2 ? 'Drift: schema.prisma differs from prisma/migrations (run db:migrate).' : 'No drift.');
  return exitCode;
}

function fail(message: string): number {
  console.error(message);
  return 1;
}

async function main(): Promise<number> {
  const [cmd, ...args] = process.argv.slice(2);
  if (!['dev', 'deploy', 'status', 'diff'].includes(cmd ?? '')) return fail(USAGE);
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return fail('DATABASE_URL is not set (e.g. postgresql://user:password@localhost:5432/app).');

  const schemaFiles: [string, string][] = [[schemaPath, await readFile(schemaPath, 'utf8')]];
  const engine = await startEngine(schemaFiles, databaseUrl);
  const MigrateCtor = Migrate as unknown as new (o: object) => MigrateT; // Migrate.setup() would start the native engine
  const migrate = new MigrateCtor({ engine, schemaContext: { schemaFiles }, migrationsDirPath: migrationsDir });
  try {
    if (cmd === 'dev') return await dev(migrate, args);
    if (cmd === 'deploy') return await deploy(migrate);
    if (cmd === 'status') return await status(migrate);
    return await diff(engine, schemaFiles);
  } finally {
    try {
      await migrate.stop(); // frees the wasm engine
    } catch {
      // after an engine panic free() throws ("...while it was borrowed"); keep the original error
    }
  }
}

async function closeAll(): Promise<void> {
  for (const drop of [...pendingDrops.values()]) await drop().catch(() => undefined);
  for (const pool of pools) if (!pool.ended) await pool.end().catch(() => undefined);
}

// A panic inside the wasm engine can surface as an uncaught RuntimeError ("unreachable") outside any
// promise we await; still drop the shadow database and close the pools before exiting.
process.on('uncaughtException', (error) => {
  console.error(`Schema engine crashed: ${error.message} (DEBUG=1 prints the engine log)`);
  void closeAll().finally(() => process.exit(1));
});

void main()
  .catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
  .then(async (code) => {
    await closeAll();
    // Exit explicitly: even with every pool ended, the wasm engine leaves a 10 s setTimeout behind when it
    // applies migrations (never cleared), which would keep the process alive that long.
    process.exit(code);
  });
