// A streaming standby of a private PostgreSQL (postgres.ts), made with what the embedded binaries have: no
// pg_basebackup, so the base backup is taken over SQL (pg_backup_start / pg_backup_stop, non-exclusive: the session
// that starts it stays open through the file copy) and the data dir copied by hand. The standby streams from the
// primary through a physical replication slot of its own (the primary keeps the WAL it has not received yet) and
// accepts reads (hot standby). Used by ./scripts/dev.sh --scaled and the read-replica tests (DATABASE_READ_URL).
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  PG_PASSWORD,
  PG_USER,
  Postgres,
  pgQuery,
  removePostgresData,
  stopStalePostgres,
  type Ids,
} from './postgres.js';
import { StackError, sleep } from './process.js';

export interface PostgresReplicaOptions {
  /** The running primary (a Postgres of this module, started with wal_level replica or logical: PostgreSQL's default). */
  primary: Postgres;
  /** State directory of the standby (its data dir, postgres.log, pids/): not the primary's. */
  dir: string;
  /** A fixed port (default: a free one, kept across restarts). */
  port?: number;
  /** Extra server settings of the standby, `name=value` (e.g. fsync=off). */
  settings?: string[];
  /** The primary's replication slot for this standby (default `bmapi_replica`); one per standby. */
  slot?: string;
  /** How long start() waits for the standby to stream and catch up (default 60 s). */
  readyTimeoutMs?: number;
  log?: (msg: string) => void;
}

/** What the copy leaves out (as pg_basebackup does): the server's run-time files and what the standby rebuilds. */
const SKIPPED = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'standby.signal']);
/** Directories copied empty. */
const EMPTIED = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_stat_tmp',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_subtrans',
  'log',
]);

/** The first row of a statement, typed by the caller. */
async function firstRow<R>(url: string, sql: string, params?: unknown[]): Promise<R> {
  return (await pgQuery({ connectionString: url }, sql, params)).rows[0] as R;
}

export class PostgresReplica {
  /** The standby's server: its `port`, `dataDir`, `logFile`, `alive()`. */
  server: Postgres;
  private readonly slot: string;

  constructor(private readonly o: PostgresReplicaOptions) {
    if (path.resolve(o.dir) === path.dirname(path.resolve(o.primary.logFile)))
      throw new StackError('the replica needs a state directory of its own, not the primary’s');
    this.slot = o.slot ?? 'bmapi_replica';
    if (!/^[a-z0-9_]{1,63}$/.test(this.slot)) throw new StackError(`invalid replication slot name: ${this.slot}`);
    this.server = this.makeServer(o.port);
  }

  get port(): number {
    return this.server.port;
  }

  /** The standby's URL (read-only: DATABASE_READ_URL), same user and password as the primary. */
  url(db = 'postgres'): string {
    return this.server.url(db);
  }

  /**
   * A new copy of the primary, started as a standby; resolves once it accepts reads, streams, and has replayed
   * everything the primary had written when the copy started (databases created before are there). Every start
   * copies afresh: a standby left from an earlier run (its slot gone, its WAL recycled) is not worth resuming.
   */
  async start(): Promise<void> {
    if (!this.o.primary.alive()) throw new StackError('start the primary before its replica');
    await this.checkPrimary();
    await stopStalePostgres(this.o.dir);
    removePostgresData(this.o.dir);
    fs.rmSync(path.join(this.o.dir, 'postgres'), { recursive: true, force: true });
    this.server = this.makeServer(this.server.port || this.o.port);
    await this.server.start();
    await this.waitStreaming();
  }

  /** Stops the standby and drops its slot on the primary (which would otherwise keep WAL for it forever). */
  async stop(): Promise<void> {
    await this.server.stop();
    if (!this.o.primary.alive()) return;
    await pgQuery(
      { connectionString: this.o.primary.url() },
      'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
      [this.slot],
    ).catch(() => undefined);
  }

  /** Stops and starts the standby on the same data dir and port (it resumes streaming through its slot). */
  async restart(): Promise<void> {
    await this.server.restart();
    await this.waitStreaming();
  }

  /** Stops applying WAL (it is still received): the standby's reads stay where they are, its lag grows. */
  async pauseReplay(): Promise<void> {
    await pgQuery({ connectionString: this.url() }, 'SELECT pg_wal_replay_pause()');
  }

  async resumeReplay(): Promise<void> {
    await pgQuery({ connectionString: this.url() }, 'SELECT pg_wal_replay_resume()');
  }

  /** Waits until the standby has replayed everything the primary has written so far. */
  async caughtUp(timeoutMs = 30_000): Promise<void> {
    const { lsn: target } = await firstRow<{ lsn: string }>(this.o.primary.url(), 'SELECT pg_current_wal_lsn() AS lsn');
    await this.until(timeoutMs, `replay up to ${target}`, async () => {
      const r = await firstRow<{ done: boolean }>(this.url(), 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [
        target,
      ]);
      return r.done;
    });
  }

  // -------------------------------------------------------------------------------------------------------

  private makeServer(port: number | undefined): Postgres {
    return new Postgres({
      dir: this.o.dir,
      port: port || undefined,
      settings: this.o.settings,
      log: this.o.log,
      seed: (dataDir, ids) => this.baseBackup(dataDir, ids),
    });
  }

  /** The primary can stream: WAL for replicas, senders, and a replication line for 127.0.0.1 in pg_hba.conf. */
  private async checkPrimary(): Promise<void> {
    const url = this.o.primary.url();
    const show = async (name: string) => String((await firstRow<Record<string, unknown>>(url, `SHOW ${name}`))[name]);
    const walLevel = await show('wal_level');
    if (walLevel === 'minimal')
      throw new StackError('the primary runs with wal_level=minimal: start it with wal_level=replica (the default)');
    if (Number(await show('max_wal_senders')) < 1)
      throw new StackError('the primary runs with max_wal_senders=0: start it with max_wal_senders of 1 or more');
    const hba = await show('hba_file');
    const lines = fs.readFileSync(hba, 'utf8');
    if (!/^\s*host\s+replication\s+\S+\s+127\.0\.0\.1\/32\s/m.test(lines)) {
      fs.appendFileSync(hba, `\nhost replication ${PG_USER} 127.0.0.1/32 scram-sha-256\n`);
      await pgQuery({ connectionString: url }, 'SELECT pg_reload_conf()');
      this.o.log?.(`added a replication line for 127.0.0.1 to ${hba}`);
    }
  }

  /** The data dir from a base backup of the primary taken over SQL, set up as a standby of it. */
  private async baseBackup(dataDir: string, ids: Ids | null): Promise<void> {
    const t = Date.now();
    const primary = this.o.primary;
    const client = new pg.Client({ connectionString: primary.url(), connectionTimeoutMillis: 3000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      // The slot first: from here on the primary keeps every WAL segment the standby has not received.
      await client.query(
        'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
        [this.slot],
      );
      await client.query('SELECT pg_create_physical_replication_slot($1, true)', [this.slot]);
      const source = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
      await client.query(`SELECT pg_backup_start('bmapi-replica', true)`);
      fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      copyTree(source, dataDir, true);
      const { rows } = await client.query<{ labelfile: string; spcmapfile: string | null }>(
        'SELECT labelfile, spcmapfile FROM pg_backup_stop(true)',
      );
      fs.writeFileSync(path.join(dataDir, 'backup_label'), rows[0]!.labelfile);
      if (rows[0]!.spcmapfile) fs.writeFileSync(path.join(dataDir, 'tablespace_map'), rows[0]!.spcmapfile);
    } finally {
      await client.end().catch(() => undefined);
    }
    fs.mkdirSync(path.join(dataDir, 'pg_wal', 'archive_status'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'standby.signal'), '');
    const conninfo = `host=127.0.0.1 port=${primary.port} user=${PG_USER} password=${PG_PASSWORD} application_name=${this.slot}`;
    fs.appendFileSync(
      path.join(dataDir, 'postgresql.auto.conf'),
      `\n# standby of 127.0.0.1:${primary.port} (scripts/stack/postgres-replica.ts)\n` +
        `primary_conninfo = '${conninfo}'\nprimary_slot_name = '${this.slot}'\nhot_standby = on\n`,
    );
    if (ids) chownTree(dataDir, ids);
    fs.chmodSync(dataDir, 0o700);
    this.o.log?.(`copied the primary's data dir into ${dataDir} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  }

  private async waitStreaming(): Promise<void> {
    const timeoutMs = this.o.readyTimeoutMs ?? 60_000;
    await this.until(timeoutMs, 'streaming from the primary', async () => {
      const r = await firstRow<{ standby: boolean; status: string | null }>(
        this.url(),
        'SELECT pg_is_in_recovery() AS standby, (SELECT status FROM pg_stat_wal_receiver) AS status',
      );
      return r.standby && r.status === 'streaming';
    });
    await this.caughtUp(timeoutMs);
  }

  private async until(timeoutMs: number, what: string, done: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        if (await done()) return;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) {
        const log = fs.existsSync(this.server.logFile) ? fs.readFileSync(this.server.logFile, 'utf8') : undefined;
        throw new StackError(`the replica is not ${what} after ${timeoutMs} ms${last ? ` (${last})` : ''}`, 1, log);
      }
      await sleep(100);
    }
  }
}

/** Copies a live data dir: files that vanish meanwhile (a dropped table, a removed temp file) are skipped. */
function copyTree(from: string, to: string, top: boolean): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(from, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  for (const e of entries) {
    if (top && SKIPPED.has(e.name)) continue;
    const src = path.join(from, e.name);
    const dst = path.join(to, e.name);
    if (e.isDirectory()) {
      fs.mkdirSync(dst, { recursive: true, mode: 0o700 });
      if (!(top && EMPTIED.has(e.name))) copyTree(src, dst, false);
    } else if (e.isFile()) {
      try {
        fs.copyFileSync(src, dst);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }
}

function chownTree(dir: string, ids: Ids): void {
  fs.chownSync(dir, ids.uid, ids.gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p, ids);
    else fs.chownSync(p, ids.uid, ids.gid);
  }
}
