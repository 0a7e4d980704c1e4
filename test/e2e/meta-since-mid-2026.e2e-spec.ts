import { jest } from '@jest/globals';
import { helloWorld, onboard, recipient, simControl, type Tenant } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { waitFor } from '../utils/webhooks.js';

jest.setTimeout(120_000);

interface EventItem {
  kind: string;
  eventType: string;
  title: string;
  status: string | null;
  recipient: string | null;
  userId: string | null;
  messageId: string | null;
  processed: boolean;
}

interface MessageItem {
  id: number;
  direction: string;
  from: string | null;
  userId: string | null;
  type: string;
  status: string;
  handledBy: string | null;
  upstreamMessageId: string | null;
  content: Record<string, unknown>;
}

/**
 * Issue 38 end to end, against the real API and worker and the simulator playing Meta since mid-2026: Meta Business
 * Agent (`standby`, echoes, `messaging_handovers`, a reply taking the conversation over), a user's id changing, calls
 * opening the window, 2026 status shapes and pricing. The simulator's statuses are slow on purpose (delivered and read
 * seconds after the send), so that they arrive after a user id change made right after a send.
 */
describe('Meta since mid-2026: standby, handovers, user id changes, calls, 2026 statuses', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      worker: true,
      // Statuses carry contacts with wa_id and user_id and no profile (Meta's 2026 shape).
      sim: { statusDelaysMs: { sent: 50, delivered: 2500, read: 3000 }, userIds: 'alongside' },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const control = (path: string, body: Record<string, unknown>) => simControl(stack, path, body);
  const on = (t: Tenant) => ({ wabaId: t.account.wabaId, phoneNumberId: t.account.phoneNumberId });
  const send = (t: Tenant, body: Record<string, unknown>) =>
    stack.http
      .post('/messages')
      .set(t.key.headers)
      .send({ phoneNumberId: t.account.phoneNumberId, ...body });
  const text = (to: Record<string, string>, body = 'Thanks for writing') => ({ ...to, type: 'text', text: { body } });
  const userId = () => `US.${String(Date.now())}${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`;
  const events = async (t: Tenant, query: Record<string, string>): Promise<EventItem[]> => {
    const res = await stack.http
      .get('/webhooks/events')
      .set('cookie', t.operator.cookie)
      .query({ wabaId: t.account.wabaId, limit: 100, ...query });
    return (res.body.data?.items ?? []) as EventItem[];
  };
  const eventWhere = (t: Tenant, query: Record<string, string>, match: (e: EventItem) => boolean, what: string) =>
    waitFor(async () => (await events(t, query)).find((e) => e.processed && match(e)), what, 30_000);
  const messages = async (t: Tenant, query: Record<string, string> = {}): Promise<MessageItem[]> => {
    const res = await stack.http
      .get('/messages')
      .set(t.key.headers)
      .query({ limit: 100, ...query });
    return (res.body.data?.items ?? []) as MessageItem[];
  };
  const inboundMessage = (t: Tenant, wamid: string) =>
    waitFor(
      async () => (await messages(t, { direction: 'inbound' })).find((m) => m.upstreamMessageId === wamid),
      `inbound message ${wamid}`,
      30_000,
    );
  const messageIn = (t: Tenant, id: number, status: string) =>
    waitFor(
      async () => {
        const res = await stack.http.get(`/messages/${id}`).set(t.key.headers);
        return res.body.data?.status === status ? (res.body.data as MessageItem) : undefined;
      },
      `message ${id} ${status}`,
      30_000,
    );

  describe('Meta Business Agent: standby and messaging_handovers', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Business Agent Org');
    });

    it("files the customer's standby messages as inbound (handled by the agent, window open), the agent's echoes and statuses as events only, and a reply takes the conversation over", async () => {
      const customer = recipient();
      await control('agent', { ...on(t), from: customer });
      const passed = await eventWhere(
        t,
        { kind: 'handover' },
        (e) => e.recipient === customer && e.status === 'control_passed',
        'the handover to the agent',
      );
      expect(passed).toMatchObject({
        eventType: 'messaging_handovers',
        title: `Conversation with ${customer}: Meta Business Agent now holds control from the business app`,
      });

      // The customer writes while the agent holds the conversation: Meta sends it on `standby`.
      const first = await control('inbound', { ...on(t), from: customer, text: 'Where is my order?' });
      expect(first.field).toBe('standby');
      const stored = await inboundMessage(t, first.wamid as string);
      expect(stored).toMatchObject({
        direction: 'inbound',
        from: customer,
        type: 'text',
        handledBy: 'meta_business_agent',
        content: { text: { body: 'Where is my order?' } },
      });
      const [event] = await events(t, { messageId: first.wamid as string });
      expect(event).toMatchObject({ kind: 'inbound_message', eventType: 'standby', processed: true });
      expect(event!.title).toMatch(/handled by Meta Business Agent/);

      // The agent answers: an echo and its status, on standby. Neither is a customer's message; the status waits for nothing.
      const reply = await control('agent-reply', { ...on(t), to: customer, text: 'It ships tomorrow' });
      const echo = await eventWhere(
        t,
        { messageId: reply.wamid as string, kind: 'agent_message' },
        () => true,
        "the agent's echo",
      );
      expect(echo).toMatchObject({ eventType: 'standby', recipient: customer });
      expect(echo.title).toBe(`Meta Business Agent sent text to ${customer}`);
      const agentStatus = await eventWhere(
        t,
        { messageId: reply.wamid as string, kind: 'status_update' },
        () => true,
        "the agent's message status, processed at once",
      );
      expect(agentStatus).toMatchObject({ eventType: 'standby', status: 'delivered' });
      const inbound = await messages(t, { direction: 'inbound' });
      expect(inbound.map((m) => m.upstreamMessageId)).toEqual([first.wamid]);
      expect((await messages(t)).some((m) => m.upstreamMessageId === reply.wamid)).toBe(false);

      // The standby message opened the window: a person's reply goes, and takes the conversation over.
      const answered = await send(t, text({ to: customer }, 'A person here: it ships tomorrow at 9'));
      expect(answered.status).toBe(200);
      const taken = await eventWhere(
        t,
        { kind: 'handover' },
        (e) => e.recipient === customer && e.status === 'control_taken',
        'the business taking the conversation over',
      );
      expect(taken.title).toBe(`Conversation with ${customer}: the business app took control from Meta Business Agent`);
      // Our own message's statuses still move it (they come on `messages` now).
      expect(await messageIn(t, answered.body.data.id as number, 'read')).toMatchObject({ handledBy: null });

      const next = await control('inbound', { ...on(t), from: customer, text: 'Great, thanks' });
      expect(next.field).toBe('messages');
      expect(await inboundMessage(t, next.wamid as string)).toMatchObject({ handledBy: null });
    });

    it('documents handledBy in the OpenAPI document', async () => {
      const doc = await stack.http.get('/swagger/docs-json');
      expect(JSON.stringify(doc.body)).toMatch(/"handledBy":\{[^}]*"enum":\["meta_business_agent"\]/);
    });
  });

  describe("a user's id changes (user_changed_user_id)", () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'User Id Change Org');
    });

    it('the window, a marketing stop and the history follow the user to the new id; statuses arriving after the change still move the message', async () => {
      const before = userId();
      const after = userId();
      await control('inbound', { ...on(t), userId: before, text: 'Hello' });
      const opened = await waitFor(async () => {
        const res = await send(t, text({ userId: before }));
        return res.status === 200 ? res : undefined;
      }, 'the reply inside the window the inbound message opened');
      await control('user-preferences', { ...on(t), userId: before, value: 'stop' });
      await waitFor(async () => {
        const res = await stack.http
          .get(`/business-accounts/${t.account.wabaId}/marketing-preferences`)
          .set('cookie', t.operator.cookie)
          .query({ user: before });
        return res.body.data?.items?.[0]?.value === 'stop' ? true : undefined;
      }, 'the stop recorded for the old id');

      // The id changes while the reply's delivered and read statuses are still on their way.
      const change = await control('user-change', { ...on(t), previousUserId: before, userId: after });
      const system = await inboundMessage(t, change.wamid as string);
      expect(system).toMatchObject({ type: 'system' });

      // The reply moves to read on statuses sent after the change, and is listed under the new id with the customer's message.
      const read = await messageIn(t, opened.body.data.id as number, 'read');
      expect(read.userId).toBe(after);
      const history = await messages(t, { userId: after });
      expect(history.map((m) => m.id)).toEqual(expect.arrayContaining([opened.body.data.id, system.id]));
      expect(await messages(t, { userId: before })).toEqual([]);

      // A send to the new id behaves as to the old one: the window is open, the marketing stop holds.
      const again = await send(t, text({ userId: after }, 'Still here'));
      expect(again.status).toBe(200);
      const marketing = await send(t, {
        userId: after,
        type: 'template',
        templateName: 'weekly_deals',
        templateLanguage: 'en_US',
      });
      expect(marketing.status).toBe(422);
      expect(marketing.body.errors).toEqual([
        { field: 'userId', message: expect.stringMatching(/stopped marketing messages/) },
      ]);
      expect(stack.sim.sends({ to: after }).filter((s) => (s.body as { type?: string }).type === 'template')).toEqual(
        [],
      );
    });

    it('a block follows the user to the new id', async () => {
      const before = userId();
      const after = userId();
      await control('inbound', { ...on(t), userId: before, text: 'Hi' });
      const blocks = `/business-accounts/${t.account.wabaId}/phone-numbers/${t.account.phoneNumberId}/blocked-users`;
      await waitFor(async () => {
        const res = await stack.http
          .post(blocks)
          .set('cookie', t.operator.cookie)
          .send({ users: [before] });
        return res.status === 200 && res.body.data.blocked.length === 1 ? true : undefined;
      }, 'the block once the simulator saw the inbound message');
      const change = await control('user-change', { ...on(t), previousUserId: before, userId: after });
      await inboundMessage(t, change.wamid as string);
      // A template (no window needed) to the new id: refused before Meta, as it would be to the old one.
      const { to: _none, ...template } = helloWorld(t, '');
      const refused = await send(t, { ...template, userId: after });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([
        { field: 'userId', message: expect.stringMatching(/blocked on phone number/) },
      ]);
      expect(stack.sim.sends({ to: after })).toEqual([]);
    });
  });

  describe('calls', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Calls Org');
    });

    it('stores call events (who, direction, connect/terminate, duration) and a user-initiated call opens the window', async () => {
      const caller = recipient();
      const closed = await send(t, text({ to: caller }));
      expect(closed.status).toBe(422);
      expect(closed.body.errors).toEqual([{ field: 'to', message: expect.stringMatching(/window is closed/) }]);

      const { callId } = await control('calls', { ...on(t), from: caller, event: 'connect' });
      const connect = await eventWhere(
        t,
        { kind: 'call', recipient: caller },
        (e) => e.status === 'connect',
        'connect',
      );
      expect(connect).toMatchObject({
        eventType: 'calls',
        messageId: callId,
        title: `Call from ${caller}: connect (user initiated)`,
      });
      const reply = await waitFor(async () => {
        const res = await send(t, text({ to: caller }, 'Sorry we missed you'));
        return res.status === 200 ? res : undefined;
      }, 'the reply inside the window the call opened');
      expect(reply.body.data).toMatchObject({ type: 'text', status: 'sent' });

      await control('calls', { ...on(t), from: caller, event: 'terminate', callId, duration: 42 });
      const ended = await eventWhere(
        t,
        { kind: 'call', recipient: caller },
        (e) => e.status === 'terminate',
        'terminate',
      );
      expect(ended.title).toBe(`Call from ${caller} ended (COMPLETED) after 42 s`);

      // A call the business made does not open a window.
      const callee = recipient();
      await control('calls', { ...on(t), from: callee, direction: 'BUSINESS_INITIATED' });
      await eventWhere(t, { kind: 'call', recipient: callee }, () => true, 'the business-initiated call');
      expect((await send(t, text({ to: callee }))).status).toBe(422);
    });
  });

  describe('2026 status shapes, unsupported messages and pricing', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Status Shapes Org');
    });

    it('moves messages on statuses whose contacts have no profile, stores unsupported messages as such, and counts billable service messages', async () => {
      const to = recipient();
      const sent = await send(t, helloWorld(t, to));
      expect(sent.status).toBe(200);
      await messageIn(t, sent.body.data.id as number, 'read');
      const [status] = await events(t, { messageId: sent.body.data.upstreamMessageId as string, status: 'read' });
      expect(status).toMatchObject({ recipient: to, processed: true });
      expect(status!.userId).toMatch(/^US\./);

      const unsupported = {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: t.account.wabaId,
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '447700900500', phone_number_id: t.account.phoneNumberId },
                  contacts: [{ wa_id: to }],
                  messages: [
                    {
                      from: to,
                      id: `wamid.UNSUPPORTED${String(Date.now())}`,
                      timestamp: String(Math.floor(Date.now() / 1000)),
                      type: 'unsupported',
                      errors: [{ code: 131051, title: 'Message type unknown' }],
                    },
                  ],
                },
              },
            ],
          },
        ],
      };
      await control('webhooks/raw', { payload: unsupported });
      const stored = await waitFor(
        async () => (await messages(t, { direction: 'inbound' })).find((m) => m.type === 'unsupported'),
        'the unsupported message',
      );
      expect(stored.content).toMatchObject({ errors: [{ code: 131051 }] });

      // A service message in the window the customer opened: billed since 2026-10-01 (the simulator prices it so).
      const service = await waitFor(async () => {
        const res = await send(t, text({ to }, 'Your parcel left the depot'));
        return res.status === 200 ? res : undefined;
      }, 'a service message in the window');
      await messageIn(t, service.body.data.id as number, 'read');
      const analytics = await waitFor(async () => {
        const res = await stack.http.get('/messages/analytics').set(t.key.headers);
        return res.body.data?.pricing?.billable === 2 ? res.body.data : undefined;
      }, 'both messages priced');
      expect(analytics.pricing).toMatchObject({
        byCategory: { utility: 1, service: 1, group_service: 0, general_purpose_ai: 0 },
        billable: 2,
        billableByCategory: { utility: 1, service: 1, marketing: 0 },
      });
    });
  });
});
