import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../scripts/stack/app.js';
import { Postgres, pgQuery } from '../../scripts/stack/postgres.js';
import { PostgresReplica } from '../../scripts/stack/postgres-replica.js';
import { eventually, helloWorld, onboard, recipient, type OnboardedTenant } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';

const MAX_LAG_MS = 4000;
const METRICS_TOKEN = 'scrape-token-replica';

/**
 * The service with a real streaming standby (DATABASE_READ_URL) of a primary of its own (scripts/stack: the embedded
 * binaries, a base backup over SQL): the lists and analytics are read there while it is within the lag bound, the
 * reads that must be fresh and the feeds on the primary; past the bound, or with the standby stopped, the lists come
 * from the primary, and the standby serves again once it is back.
 */
describe('Read replica (DATABASE_READ_URL)', () => {
  let dir: string;
  let primary: Postgres;
  let replica: PostgresReplica;
  let stack: Stack;
  let t: OnboardedTenant;
  /** The events feed as a client follows it, across every phase of the test. */
  const followed: number[] = [];
  let cursor = '0';

  const listed = async () => {
    const res = await stack.http.get('/messages').query({ limit: 100 }).set(t.key.headers);
    expect(res.status).toBe(200);
    return (res.body.data.items as Array<{ id: number }>).map((m) => m.id);
  };
  const sentTotal = async () => {
    const res = await stack.http.get('/messages/analytics').set(t.key.headers);
    expect(res.status).toBe(200);
    return res.body.data.totals.total as number;
  };
  const send = async () => {
    const res = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, recipient()));
    expect(res.status).toBe(200);
    return res.body.data.id as number;
  };
  const metrics = async () => {
    const res = await stack.http.get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`);
    expect(res.status).toBe(200);
    return res.text;
  };
  const series = (text: string, name: string) => {
    const m = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const serving = async () => series(await metrics(), 'bmapi_db_replica_serving');
  /** Reads the events feed on from where the client left it. */
  const follow = async () => {
    for (;;) {
      const res = await stack.http
        .get('/webhooks/events')
        .query({ wabaId: t.account.wabaId, after: cursor, limit: 100 })
        .set('cookie', t.operator.cookie);
      expect(res.status).toBe(200);
      const items = res.body.data.items as Array<{ id: number }>;
      followed.push(...items.map((e) => e.id));
      cursor = res.body.data.nextCursor as string;
      if (items.length === 0) return;
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bmapi-replica-'));
    // The postgres OS user (when we are root) must reach the data dirs.
    chmodSync(dir, 0o755);
    primary = new Postgres({ dir: path.join(dir, 'primary'), settings: ['fsync=off'] });
    await primary.start();
    await primary.ensureDatabases(['bmapi']);
    await migrate(primary.url('bmapi'));
    replica = new PostgresReplica({ primary, dir: path.join(dir, 'replica'), settings: ['fsync=off'] });
    await replica.start();
    stack = await startStack({
      worker: true,
      env: {
        DATABASE_URL: primary.url('bmapi'),
        DATABASE_READ_URL: replica.url('bmapi'),
        DATABASE_READ_MAX_LAG_MS: String(MAX_LAG_MS),
        METRICS_TOKEN,
      },
    });
    t = await onboard(stack, 'Replica Org');
    await eventually(async () => (await serving()) === 1, { timeoutMs: 30_000 });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await replica?.stop().catch(() => undefined);
    await primary?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists and counts from the replica within the lag bound, fresh reads from the primary; past it, the primary', async () => {
    const first = await send();
    await replica.caughtUp();
    expect(await listed()).toContain(first);
    const before = await sentTotal();
    await follow();

    await replica.pauseReplay();
    const second = await send();
    // The message just sent is there for GET /messages/:id (the primary) …
    const one = await stack.http.get(`/messages/${second}`).set(t.key.headers);
    expect(one.status).toBe(200);
    expect(one.body.data.id).toBe(second);
    // … but not yet in the list or the counts, read on the replica, which is behind by less than the bound.
    expect(await listed()).not.toContain(second);
    expect(await sentTotal()).toBe(before);
    expect(series(await metrics(), 'bmapi_db_replica_serving')).toBe(1);
    // The feed is the primary's: Meta's statuses of the message, committed there, are followed whatever the
    // replica's lag.
    const wamid = one.body.data.upstreamMessageId as string;
    const seen = await eventually(async () => {
      const res = await stack.http
        .get('/webhooks/events')
        .query({ wabaId: t.account.wabaId, after: cursor, messageId: wamid })
        .set('cookie', t.operator.cookie);
      return (res.body.data?.items ?? []).length > 0;
    });
    expect(seen).toBe(true);
    await follow();

    // Past the bound the lists come from the primary, and the metrics say why.
    await eventually(async () => (await listed()).includes(second), { timeoutMs: 30_000 });
    expect(await sentTotal()).toBe(before + 1);
    const text = await metrics();
    expect(series(text, 'bmapi_db_replica_lag_seconds')).toBeGreaterThan(MAX_LAG_MS / 1000);
    expect(series(text, 'bmapi_db_replica_serving')).toBe(0);
    expect(series(text, 'bmapi_db_replica_fallbacks_total{reason="lag"}')).toBeGreaterThan(0);

    // Caught up again, the replica serves again.
    await replica.resumeReplay();
    await eventually(async () => (await serving()) === 1, { timeoutMs: 30_000 });
    expect(series(await metrics(), 'bmapi_db_replica_lag_seconds')).toBeLessThanOrEqual(MAX_LAG_MS / 1000);
    expect(await listed()).toContain(second);
  });

  it('answers the lists from the primary while the replica is down, and uses it again once it is back', async () => {
    await replica.server.stop();
    // Stopped between two checks or not, no list fails: a read the replica cannot serve runs on the primary.
    const third = await send();
    expect(await listed()).toContain(third);
    expect(await sentTotal()).toBeGreaterThan(0);
    await eventually(async () => (await serving()) === 0, { timeoutMs: 10_000 });
    const text = await metrics();
    expect(series(text, 'bmapi_db_replica_lag_seconds')).toBeNaN();
    const fallbacks =
      (series(text, 'bmapi_db_replica_fallbacks_total{reason="error"}') ?? 0) +
      (series(text, 'bmapi_db_replica_fallbacks_total{reason="unavailable"}') ?? 0);
    expect(fallbacks).toBeGreaterThan(0);
    expect(await listed()).toContain(third);

    await replica.restart();
    await eventually(async () => (await serving()) === 1, { timeoutMs: 30_000 });
    expect(await listed()).toContain(third);
  });

  it('the events feed, followed through every phase, gave each event committed on the primary exactly once', async () => {
    // Every status Meta posted for the messages sent has been stored before the feed is read to its end.
    await eventually(async () => {
      const { rows } = await pgQuery(
        { connectionString: primary.url('bmapi') },
        "SELECT count(*)::int AS n FROM events WHERE waba_id = $1 AND status = events_status_code('read')",
        [t.account.wabaId],
      );
      return rows[0].n >= 3;
    });
    const { rows } = await pgQuery(
      { connectionString: primary.url('bmapi') },
      'SELECT id FROM events WHERE waba_id = $1 ORDER BY id',
      [t.account.wabaId],
    );
    const stored = rows.map((r: { id: string | number }) => Number(r.id));
    await eventually(async () => {
      await follow();
      return followed.length >= stored.length;
    });
    expect(new Set(followed).size).toBe(followed.length);
    expect([...followed].sort((a, b) => a - b)).toEqual(stored);
  });
});
