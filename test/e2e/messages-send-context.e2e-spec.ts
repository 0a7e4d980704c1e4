import { sql } from 'kysely';
import { startStack, type Stack } from '../utils/stack.js';
import { eventually, helloWorld, onboard, recipient, type Tenant } from '../utils/factories.js';
import { openWindow } from '../utils/messaging-rows.js';

/**
 * The pre-send read (number, template, 24 h window) is cached per API process. These tests change the
 * database the way other processes do (the worker's template-status and inbound-message effects write these
 * rows from their own connections) and check that sends follow within the documented delay: milliseconds
 * (a NOTIFY at commit), well under the 5 s safety-net TTL.
 */
describe('POST /messages: cached send context follows changes', () => {
  let stack: Stack;
  let a: Tenant;
  let b: Tenant;
  /** Far below SEND_CONTEXT_TTL_MS (5 s): passing within it proves the invalidation, not the expiry, worked. */
  const WITHIN_MS = 1000;

  const send = (t: Tenant, body: object) => stack.http.post('/messages').set(t.key.headers).send(body);
  const setTemplateStatus = (t: Tenant, name: string, language: string, status: string) =>
    stack.db
      .on()
      .updateTable('templates')
      .set({ status, updated_at: new Date() })
      .where('business_account_id', '=', t.account.businessAccountId)
      .where('name', '=', name)
      .where('language', '=', language)
      .execute();
  /**
   * Polls sends until one answers `status` (each attempt uses a fresh recipient); returns the last answer. A 422
   * must be ours (no `data`: nothing stored, Meta not called), not the simulator refusing a paused template.
   */
  const sendUntil = async (t: Tenant, status: number, extra: Record<string, unknown> = {}) => {
    let last: { status: number; body: { errors?: unknown; data?: unknown } } | undefined;
    await eventually(
      async () => {
        last = await send(t, helloWorld(t, recipient(), extra));
        return last.status === status && (status !== 422 || last.body.data === undefined);
      },
      { timeoutMs: WITHIN_MS, intervalMs: 20 },
    );
    return last!;
  };

  beforeAll(async () => {
    stack = await startStack({ sim: { webhooksEnabled: false } });
    [a, b] = await Promise.all([onboard(stack, 'Context Org A'), onboard(stack, 'Context Org B')]);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('stops sends of a template paused by another process within a second, and resumes when it is reinstated', async () => {
    expect((await send(a, helloWorld(a, recipient()))).status).toBe(200); // cached now
    await setTemplateStatus(a, 'hello_world', 'en_US', 'PAUSED');
    const refused = await sendUntil(a, 422);
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ field: 'templateName', message: expect.stringContaining('PAUSED') }]);

    await setTemplateStatus(a, 'hello_world', 'en_US', 'APPROVED');
    expect((await sendUntil(a, 200)).status).toBe(200);
  });

  it('applies a console template sync within a second', async () => {
    expect((await send(a, helloWorld(a, recipient()))).status).toBe(200);
    const decideUpstreamAndSync = async (event: string) => {
      const decided = await fetch(`${stack.sim.url}/_sim/template-status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          wabaId: a.account.wabaId,
          templateName: 'hello_world',
          language: 'en_US',
          event,
          reason: 'LOW_QUALITY',
        }),
      });
      expect(decided.status).toBe(200);
      expect(
        (
          await stack.http
            .post(`/business-accounts/${a.account.wabaId}/templates/sync`)
            .set('cookie', a.operator.cookie)
        ).status,
      ).toBe(200);
    };
    await decideUpstreamAndSync('PAUSED');
    const refused = await sendUntil(a, 422);
    expect(refused.body.errors).toEqual([{ field: 'templateName', message: expect.stringContaining('PAUSED') }]);
    expect(refused.body.data).toBeUndefined();
    await decideUpstreamAndSync('REINSTATED');
    expect((await sendUntil(a, 200)).status).toBe(200);
  });

  it("never answers one business account from another's cached context", async () => {
    // Both accounts have hello_world (en_US) cached as APPROVED; pausing B's leaves A's sendable, and the other way round.
    expect((await send(a, helloWorld(a, recipient()))).status).toBe(200);
    expect((await send(b, helloWorld(b, recipient()))).status).toBe(200);
    await setTemplateStatus(b, 'hello_world', 'en_US', 'PAUSED');
    expect((await sendUntil(b, 422)).status).toBe(422);
    for (let i = 0; i < 5; i++) expect((await send(a, helloWorld(a, recipient()))).status).toBe(200);
    // A's cached number never answers for B: B cannot send from A's phone number, cached or not.
    const crossed = await send(b, helloWorld(b, recipient(), { phoneNumberId: a.account.phoneNumberId }));
    expect(crossed.status).toBe(422);
    expect(crossed.body.errors).toEqual([{ field: 'phoneNumberId', message: expect.any(String) }]);
    await setTemplateStatus(b, 'hello_world', 'en_US', 'APPROVED');
    expect((await sendUntil(b, 200)).status).toBe(200);
  });

  it('still replays an Idempotency-Key answer after the template was paused (the key wins over the checks)', async () => {
    const key = `ctx-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const body = helloWorld(a, recipient());
    const withKey = (b: object) => stack.http.post('/messages').set(a.key.headers).set('Idempotency-Key', key).send(b);
    const first = await withKey(body);
    expect(first.status).toBe(200);
    await setTemplateStatus(a, 'hello_world', 'en_US', 'PAUSED');
    expect((await sendUntil(a, 422)).status).toBe(422);

    const replay = await withKey(body);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const otherBody = await withKey(helloWorld(a, recipient()));
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.errors).toEqual([
      { field: 'Idempotency-Key', message: expect.stringContaining('different request body') },
    ]);
    await setTemplateStatus(a, 'hello_world', 'en_US', 'APPROVED');
    expect((await sendUntil(a, 200)).status).toBe(200);
  });

  it('sends a text at once after an inbound message opens the window (a closed window is never cached)', async () => {
    const to = recipient();
    const text = {
      phoneNumberId: a.account.phoneNumberId,
      to,
      type: 'text',
      text: { body: 'Thanks for your message.' },
    };
    const closed = await send(a, text);
    expect(closed.status).toBe(422);
    expect(closed.body.errors).toEqual([{ field: 'to', message: expect.stringContaining('24 h') }]);
    // What the worker writes for an inbound message from this customer.
    await openWindow(stack, a.account, to);
    const open = await send(a, text);
    expect(open.status).toBe(200);
    expect((await send(a, text)).status).toBe(200);
  });

  it('stops caching while its notification connection is down, so changes made meanwhile still apply at once', async () => {
    expect((await send(a, helloWorld(a, recipient()))).status).toBe(200);
    const { rows: killed } = await sql<{ n: number }>`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`.execute(
      stack.db.on(),
    );
    expect(killed[0]!.n).toBeGreaterThanOrEqual(1);
    await setTemplateStatus(a, 'hello_world', 'en_US', 'PAUSED');
    expect((await sendUntil(a, 422)).status).toBe(422);
    await setTemplateStatus(a, 'hello_world', 'en_US', 'APPROVED');
    expect((await sendUntil(a, 200)).status).toBe(200);
    // Reconnected (about a second later): cached and invalidated again.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await send(a, helloWorld(a, recipient()))).status).toBe(200);
    await setTemplateStatus(a, 'hello_world', 'en_US', 'PAUSED');
    expect((await sendUntil(a, 422)).status).toBe(422);
    await setTemplateStatus(a, 'hello_world', 'en_US', 'APPROVED');
  });
});
