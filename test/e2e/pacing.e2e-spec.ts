import { startStack, type Stack } from '../utils/stack.js';
import { helloWorld, onboard, recipient, simControl, type OnboardedTenant } from '../utils/factories.js';

/** A template send straight to the simulator (as another sender on the same number would: not through us). */
async function sendDirect(stack: Stack, t: OnboardedTenant, to: string): Promise<{ status: number; code?: number }> {
  const res = await fetch(`${stack.sim.baseUrl}/${t.account.phoneNumberId}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.account.accessToken}` },
    body: JSON.stringify({
      messaging_product: 'whatsapp',
      to,
      type: 'template',
      template: { name: 'hello_world', language: { code: 'en_US' } },
    }),
  });
  const body = (await res.json()) as { error?: { code?: number } };
  return { status: res.status, code: body.error?.code };
}

const sendsOf = (stack: Stack, t: OnboardedTenant) => stack.sim.sends().filter((s) => s.wabaId === t.account.wabaId);
const refusedUpstream = (stack: Stack, t: OnboardedTenant) =>
  sendsOf(stack, t).filter((s) => (s.response.body as { error?: { code?: number } }).error?.code === 130429);
/** The most sends Meta accepted from the tenant's number in any one second of its clock. */
const busiestSecond = (stack: Stack, t: OnboardedTenant, sends = sendsOf(stack, t)) => {
  const times = sends
    .filter((s) => s.response.status === 200)
    .map((s) => Date.parse(s.at))
    .sort((a, b) => a - b);
  return Math.max(0, ...times.map((at, i) => times.slice(i).filter((x) => x < at + 1000).length));
};

/** The number shared with the WhatsApp Business app (20/s), as Meta lists it and the service synced it. */
async function coexistence(stack: Stack, t: OnboardedTenant): Promise<void> {
  await simControl(stack, 'throughput', {
    wabaId: t.account.wabaId,
    phoneNumberId: t.account.phoneNumberId,
    level: 'COEXISTENCE',
  });
  const sync = await stack.http
    .post(`/business-accounts/${t.account.wabaId}/phone-numbers/sync`)
    .set('cookie', t.operator.cookie);
  expect(sync.status).toBe(200);
}

describe("per-number pacing (Meta's throughput)", () => {
  describe("the simulator enforces each number's throughput as Meta does", () => {
    let stack: Stack;
    let t: OnboardedTenant;
    beforeAll(async () => {
      stack = await startStack();
      t = await onboard(stack, 'Sim Throughput Org');
    }, 180_000);
    afterAll(async () => {
      await stack?.close();
    });

    it("never takes more than its tier in a second: 130429 over it (HTTP 429, Meta's error shape), 80 at STANDARD, 20 shared with the Business app, 1,000 at HIGH", async () => {
      // Whatever the host's speed, at most 80 accepted in any one second of the simulator's clock.
      const standard = await Promise.all(Array.from({ length: 200 }, () => sendDirect(stack, t, recipient())));
      expect(standard.every((a) => a.status === 200 || (a.status === 429 && a.code === 130429))).toBe(true);
      expect(busiestSecond(stack, t, sendsOf(stack, t))).toBeLessThanOrEqual(80);

      await simControl(stack, 'throughput', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        level: 'COEXISTENCE',
      });
      await new Promise((r) => setTimeout(r, 1100));
      const before = sendsOf(stack, t).length;
      const shared = await Promise.all(Array.from({ length: 100 }, () => sendDirect(stack, t, recipient())));
      expect(shared.filter((a) => a.status === 429 && a.code === 130429).length).toBeGreaterThan(0);
      expect(busiestSecond(stack, t, sendsOf(stack, t).slice(before))).toBeLessThanOrEqual(20);
      const refusal = refusedUpstream(stack, t)[0]!.response.body as { error: Record<string, unknown> };
      expect(refusal.error).toMatchObject({
        message: '(#130429) Rate limit hit',
        type: 'OAuthException',
        code: 130429,
        error_data: { messaging_product: 'whatsapp', details: expect.any(String) },
      });

      await simControl(stack, 'throughput', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        level: 'HIGH',
      });
      await new Promise((r) => setTimeout(r, 1100)); // the last second's sends leave the window
      const high = await Promise.all(Array.from({ length: 300 }, () => sendDirect(stack, t, recipient())));
      expect(high.every((a) => a.status === 200)).toBe(true);
      const listed = await fetch(`${stack.sim.baseUrl}/${t.account.wabaId}/phone_numbers?fields=id,throughput`, {
        headers: { authorization: `Bearer ${t.account.accessToken}` },
      });
      expect(
        ((await listed.json()) as { data: { id: string; throughput: unknown }[] }).data.find(
          (p) => p.id === t.account.phoneNumberId,
        )!.throughput,
      ).toEqual({ level: 'HIGH' });
    });
  });

  describe('POST /messages keeps each number at its tier, across concurrent sends', () => {
    let stack: Stack;
    let t: OnboardedTenant;
    beforeAll(async () => {
      // API, simulator and test client share one event loop here, on a host shared with other suites: a send can reach
      // the simulator a few hundred ms after its slot, and sends held up together arrive together. A wider window keeps
      // Meta's count exact whatever the host (at 1.3 s, one of the 50 below was answered 429 in a CI run of 2026-12-03),
      // and leaves room for a send to leave up to 100 ms after its slot before it has to take a new one.
      stack = await startStack({
        env: { PACING_MAX_WAIT_MS: '10000', PACING_WINDOW_MS: '1500', PACING_LATE_MS: '100' },
      });
      t = await onboard(stack, 'Pacing Org');
      await coexistence(stack, t);
    }, 180_000);
    afterAll(async () => {
      await stack?.close();
    });

    it('makes 50 concurrent sends to one 20/s number wait for their slots: every one accepted, never over its pace at Meta', async () => {
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, recipient())),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
      // One slot every PACING_WINDOW_MS / 20 = 75 ms: the last of the 50 left about 3.7 s after the first.
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
      expect(sendsOf(stack, t)).toHaveLength(50);
      expect(refusedUpstream(stack, t)).toHaveLength(0);
      expect(busiestSecond(stack, t)).toBeLessThanOrEqual(20);
    });
  });

  describe('past PACING_MAX_WAIT_MS, and after a 130429', () => {
    let stack: Stack;
    let t: OnboardedTenant;
    beforeAll(async () => {
      // No wait at all: a send its process was late for (PACING_LATE_MS) would find the number's next slot taken and be
      // refused; 200 ms of grace, as API and simulator share this test's event loop on a busy host.
      stack = await startStack({ env: { PACING_MAX_WAIT_MS: '0', PACING_LATE_MS: '200' } });
      t = await onboard(stack, 'Pacing Refusal Org');
      await coexistence(stack, t);
    }, 180_000);
    afterAll(async () => {
      await stack?.close();
    });

    it("answers 429 with Retry-After and the number's throughput, stores the attempt failed, and never calls Meta for it", async () => {
      const answers = await Promise.all(
        Array.from({ length: 60 }, () =>
          stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, recipient())),
        ),
      );
      const refused = answers.filter((a) => a.status === 429);
      const accepted = answers.filter((a) => a.status === 200);
      expect(refused.length).toBeGreaterThan(0);
      expect(accepted.length + refused.length).toBe(60);
      expect(refused[0]!.headers['retry-after']).toMatch(/^[12]$/);
      expect(refused[0]!.body).toMatchObject({
        statusCode: 429,
        message: expect.stringMatching(
          new RegExp(
            `Phone number ${t.account.phoneNumberId} is at its throughput \\(COEXISTENCE: 20 messages/s\\); nothing was sent`,
          ),
        ),
        data: { status: 'failed', error: { code: null, category: 'throughput' } },
      });
      expect(sendsOf(stack, t)).toHaveLength(accepted.length);
      expect(refusedUpstream(stack, t)).toHaveLength(0);
      expect(busiestSecond(stack, t)).toBeLessThanOrEqual(20);
    });

    it('holds the number back when Meta answers 130429 anyway (someone else sends on it): the answer says so, and the next send is refused without calling Meta', async () => {
      await new Promise((r) => setTimeout(r, 1200));
      // Another sender keeps the number's second at Meta full while ours goes out (a single burst of 20 may spread over
      // more than a second on a slow host, and leave room): four loops of direct sends, running until Meta refuses one
      // (the second is full now) and then until our send has its answer.
      let filling = true;
      let other: Promise<void[]> = Promise.resolve([]);
      const full = new Promise<void>((resolve) => {
        const loop = async () => {
          while (filling) if ((await sendDirect(stack, t, recipient())).code === 130429) resolve();
        };
        other = Promise.all([loop(), loop(), loop(), loop()]);
      });
      await full;
      const next = recipient();
      let mine = recipient();
      let first = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, mine));
      // The loops keep Meta's second full, but a slot opens each time their oldest send ages out of it: ours can arrive
      // at that instant and be accepted (CI, 2026-12-03). Not the case under test: send again until Meta refuses one.
      for (let attempt = 1; first.status === 200 && attempt < 5; attempt++) {
        mine = recipient();
        first = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, mine));
      }
      // At once (the hold lasts 1 s): refused by the service, Meta not called.
      const held = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, next));
      filling = false;
      await other;
      const sendsTo = (to: string) =>
        sendsOf(stack, t).filter((s) => (s.body as { to?: string }).to?.replace(/^\+/, '') === to);
      expect(first.status).toBe(429);
      expect(first.body.message).toMatch(/130429/);
      expect(first.body.message).toMatch(
        new RegExp(`sends on phone number ${t.account.phoneNumberId} are held for 1 s`),
      );
      expect(first.body.data.error).toMatchObject({ code: 130429, category: 'throughput' });
      expect(sendsTo(mine)).toHaveLength(1);

      expect(held.status).toBe(429);
      expect(held.body.message).toMatch(
        /is held back for 1 s: Meta refused a send over its throughput \(130429\); nothing was sent/,
      );
      expect(sendsTo(next)).toHaveLength(0);
    });
  });
});
