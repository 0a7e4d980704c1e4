import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PgBouncer } from '../../scripts/stack/pgbouncer.js';
import { startStack, type Stack } from '../utils/stack.js';
import { eventually, helloWorld, onboard, recipient, type Tenant } from '../utils/factories.js';

const PGBOUNCER = '/usr/sbin/pgbouncer';

/**
 * The service behind a real PgBouncer (Debian's 1.18) in transaction pooling, as managed PostgreSQL is fronted: every
 * statement of the API and the worker goes through the pooler (DATABASE_URL), unnamed (PgBouncer < 1.21 keeps no
 * prepared statement across transactions: DATABASE_PREPARED_STATEMENTS=unnamed), and only what is session-bound
 * (LISTEN) goes to PostgreSQL itself (DATABASE_DIRECT_URL). ./scripts/test.sh installs pgbouncer when it is missing.
 */
describe('Behind PgBouncer in transaction pooling', () => {
  let dir: string;
  let bouncer: PgBouncer;
  let stack: Stack;
  let t: Tenant;

  beforeAll(async () => {
    if (!existsSync(PGBOUNCER))
      throw new Error(`${PGBOUNCER} is missing: ./scripts/test.sh installs it (apt-get install pgbouncer)`);
    const direct = new URL(process.env.DATABASE_URL!);
    dir = mkdtempSync(path.join(os.tmpdir(), 'bmapi-pgbouncer-'));
    chmodSync(dir, 0o755);
    // The same private PgBouncer as ./scripts/dev.sh --scaled starts (scripts/stack/pgbouncer.ts), eight server
    // connections: fewer than the service's pools ask for, so clients queue in the pooler as they do in production.
    bouncer = new PgBouncer({ dir, upstreamUrl: direct.href, poolSize: 8 });
    await bouncer.start();
    const pooled = new URL(bouncer.url());
    stack = await startStack({
      worker: true,
      // Meta retries a webhook the receiver did not take (a 503 while eight server connections are busy on a slow
      // host) for hours; the simulator's test default gives up after three quick tries, and a status would be lost.
      sim: { webhookRetry: { maxAttempts: 10, baseDelayMs: 250 } },
      env: {
        DATABASE_URL: pooled.href,
        DATABASE_DIRECT_URL: direct.href,
        DATABASE_PREPARED_STATEMENTS: 'unnamed',
      },
    });
    t = await onboard(stack, 'Pooled Org');
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await bouncer?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends, takes Meta’s status webhooks through the worker, and serves the lists and the events feed', async () => {
    const sent = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, recipient()));
    expect(sent.status).toBe(200);
    const id = sent.body.data.id as number;
    // The simulator posts sent, delivered and read; the receiver stores them, the worker applies them (its
    // statements through the pooler too).
    const read = await eventually(
      async () => {
        const res = await stack.http.get(`/messages/${id}`).set(t.key.headers);
        return res.body.data?.status === 'read' ? res.body.data : null;
      },
      { timeoutMs: 120_000 },
    );
    expect(read).toMatchObject({ id, status: 'read' });
    const list = await stack.http.get('/messages').set(t.key.headers);
    expect(list.status).toBe(200);
    expect(list.body.data.items.map((m: { id: number }) => m.id)).toContain(id);
    // Polled, as a feed is read: it serves events below its horizon (the oldest transaction still open on the
    // database), and on a busy host another test's transaction may hold that back for a moment.
    const statuses = await eventually(
      async () => {
        const feed = await stack.http
          .get('/webhooks/events')
          .query({ wabaId: t.account.wabaId, after: '0' })
          .set('cookie', t.operator.cookie);
        expect(feed.status).toBe(200);
        const seen = feed.body.data.items.map((e: { status: string }) => e.status) as string[];
        return ['sent', 'delivered', 'read'].every((s) => seen.includes(s)) ? seen : null;
      },
      { timeoutMs: 120_000 },
    );
    expect(statuses).toEqual(expect.arrayContaining(['sent', 'delivered', 'read']));
    // The connections really went through the pooler.
    expect(readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8')).toMatch(/login attempt: db=/);
  });
});
