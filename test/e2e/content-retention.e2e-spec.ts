import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { ContentRetention } from '../../src/retention/content-retention.js';
import { whereInDatabase } from '../utils/db-search.js';
import { startStack, type Stack } from '../utils/stack.js';
import {
  helloWorld,
  joinOrganization,
  onboard,
  recipient,
  simInbound,
  type OnboardedTenant,
} from '../utils/factories.js';
import { waitFor } from '../utils/webhooks.js';

jest.setTimeout(180_000);

const DAY_MS = 24 * 3600 * 1000;

/**
 * An organization keeps message content for 30 days (issue 41, item 3): the console's setting, then the worker's
 * scheduled pass scrubs what is older (messages, the message items of events, raw webhook bodies) while the rows,
 * statuses and counts stay; what is younger, and other organizations' content, is untouched.
 */
describe('Content retention per organization', () => {
  let stack: Stack;
  /** The settings' organization. */
  let t: OnboardedTenant;
  /** The scrubbed organization: due only once its rows are aged. */
  let r: OnboardedTenant;
  let other: OnboardedTenant;

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    [t, r, other] = await Promise.all([
      onboard(stack, 'Retention Org'),
      onboard(stack, 'Scrubbed Org'),
      onboard(stack, 'Keeps Everything Org'),
    ]);
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
  });

  const settings = (tenant: OnboardedTenant) =>
    stack.http.get('/organization/settings').set('cookie', tenant.operator.cookie);
  const setRetention = (tenant: OnboardedTenant, body: unknown, cookie = tenant.operator.cookie) =>
    stack.http
      .patch('/organization/settings')
      .set('cookie', cookie)
      .send(body as object);

  it('the setting: the default until set, validated, admins only, audited', async () => {
    const before = await settings(t);
    expect(before.status).toBe(200);
    expect(before.body.data).toEqual({
      id: expect.any(String),
      name: 'Retention Org',
      contentRetentionDays: null,
      defaultContentRetentionDays: 0,
      effectiveContentRetentionDays: 0,
      contentScrubbedThrough: null,
    });

    for (const bad of [
      {},
      { contentRetentionDays: -1 },
      { contentRetentionDays: 1.5 },
      { contentRetentionDays: '30' },
    ]) {
      const res = await setRetention(t, bad);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field: 'contentRetentionDays', message: expect.any(String) }]);
    }
    const member = await joinOrganization(stack, t.operator, 'member');
    expect((await setRetention(t, { contentRetentionDays: 1 }, member.cookie)).status).toBe(403);
    expect((await settings(t)).body.data.contentRetentionDays).toBeNull();

    const set = await setRetention(t, { contentRetentionDays: 30 });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ contentRetentionDays: 30, effectiveContentRetentionDays: 30 });
    const audit = await stack.http.get('/audit-log').query({ limit: 100 }).set('cookie', t.operator.cookie);
    expect(audit.body.data.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'organization.settings_changed',
          operatorEmail: t.operator.email,
          details: { contentRetentionDays: { from: null, to: 30 } },
        }),
      ]),
    );
  });

  it('scrubs what the messages said once older than the retention; rows, statuses and younger content stay', async () => {
    const customer = recipient();
    const oldWord = `aardvark${randomBytes(5).toString('hex')}`;
    const newWord = `bilby${randomBytes(5).toString('hex')}`;
    const otherWord = `cassowary${randomBytes(5).toString('hex')}`;

    const oldInbound = await simInbound(stack, r, { from: customer, text: `Old secret ${oldWord}` });
    const sent = await stack.http.post('/messages').set(r.key.headers).send(helloWorld(r, customer));
    expect(sent.status).toBe(200);
    const outboundId = sent.body.data.id as number;
    await simInbound(stack, r, { from: customer, text: `New secret ${newWord}` });
    await simInbound(stack, other, { from: recipient(), text: `Other org ${otherWord}` });

    // Everything stored and processed: both inbound messages, the outbound one delivered.
    const inboundOld = await waitFor(async () => {
      const res = await stack.http.get('/messages').query({ direction: 'inbound', limit: 10 }).set(r.key.headers);
      const items = (res.body.data?.items ?? []) as { id: number; upstreamMessageId: string }[];
      const outbound = await stack.http.get(`/messages/${outboundId}`).set(r.key.headers);
      return items.length === 2 && ['delivered', 'read'].includes(outbound.body.data?.status)
        ? items.find((m) => m.upstreamMessageId === oldInbound.wamid)
        : undefined;
    }, 'both inbound messages and the delivered outbound one');
    await waitFor(
      async () => ((await whereInDatabase(stack, otherWord)).length > 0 ? true : undefined),
      "the other organization's message",
    );
    expect((await whereInDatabase(stack, oldWord)).map((h) => h.table)).toEqual(
      expect.arrayContaining(['messages', expect.stringMatching(/^events_/)]),
    );
    // A processed delivery keeps no bytes (migration lean_events): its items are in `events`, their one copy. Its
    // bytes left the inbox with it.
    expect((await whereInDatabase(stack, oldWord)).map((h) => h.table)).not.toContainEqual(
      expect.stringMatching(/^webhook_(deliveries_|inbox$)/),
    );

    // Forty days pass for the first inbound message (its row and its event) and the
    // outbound message (its row; its status events stay young).
    const db = stack.db.on();
    const aged = new Date(Date.now() - 40 * DAY_MS);
    await db.updateTable('messages').set({ created_at: aged }).where('id', 'in', [inboundOld.id, outboundId]).execute();
    await db.updateTable('events').set({ created_at: aged }).where('message_id', '=', oldInbound.wamid).execute();

    // Only now is the organization due: a pass (any worker's) never saw it before its rows were aged, so none moved
    // its mark past them (rows are never created in the past outside a test).
    expect((await setRetention(r, { contentRetentionDays: 30 })).status).toBe(200);
    // The pass as the worker's schedule runs it. (Any worker on this database may run one meanwhile: other test
    // files' stacks share it, and this stack's own schedule starts a minute after the worker. Hence no count of this
    // call's own: the outcome and the audit entries say what was done.)
    const retention = stack.worker!.get(ContentRetention);
    await retention.pass();

    // The old words are nowhere; the young ones and the other organization's are where they were.
    expect(await whereInDatabase(stack, oldWord)).toEqual([]);
    expect((await whereInDatabase(stack, newWord)).length).toBeGreaterThan(1);
    expect((await whereInDatabase(stack, otherWord)).length).toBeGreaterThan(1);

    // The messages are still there, with their statuses, addresses and when their content went.
    const outbound = await stack.http.get(`/messages/${outboundId}`).set(r.key.headers);
    expect(outbound.body.data).toMatchObject({
      id: outboundId,
      to: customer,
      status: expect.stringMatching(/delivered|read/),
      content: null,
      contentScrubbedAt: expect.any(String),
      sentAt: expect.any(String),
    });
    const inbound = await stack.http.get(`/messages/${inboundOld.id}`).set(r.key.headers);
    expect(inbound.body.data).toMatchObject({ from: customer, content: null, contentScrubbedAt: expect.any(String) });
    const young = await stack.http.get('/messages').query({ direction: 'inbound', limit: 10 }).set(r.key.headers);
    expect(young.body.data.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ content: { text: { body: `New secret ${newWord}` } }, contentScrubbedAt: null }),
      ]),
    );
    // The event of the old message keeps its ids, sender and type.
    const event = await db
      .selectFrom('events')
      .select(['raw', 'title', 'recipient'])
      .where('message_id', '=', oldInbound.wamid)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      recipient: customer,
      raw: expect.objectContaining({ id: oldInbound.wamid, from: customer, type: 'text', contentScrubbed: true }),
    });

    // How far it got, and the audit entry of the pass (no operator: the service did it).
    const after = await settings(r);
    const through = Date.parse(after.body.data.contentScrubbedThrough as string);
    expect(Math.abs(through - (Date.now() - 30 * DAY_MS))).toBeLessThan(5 * 60_000);
    const audit = await stack.http.get('/audit-log').query({ limit: 100 }).set('cookie', r.operator.cookie);
    const passes = (audit.body.data.items as { action: string; operatorId: string | null; details: never }[]).filter(
      (e) => e.action === 'content.scrubbed',
    );
    expect(passes.length).toBeGreaterThanOrEqual(1);
    for (const e of passes) {
      expect(e.operatorId).toBeNull();
      expect(e.details).toMatchObject({ retentionDays: 30 });
    }
    // Messages are locked while scrubbed, so two passes at once never count one twice.
    const total = (key: 'messages' | 'events' | 'webhookBodies') =>
      passes.reduce((n, e: { details: Record<string, number> }) => n + e.details[key]!, 0);
    expect(total('messages')).toBe(2);
    expect(total('events')).toBeGreaterThanOrEqual(1);
    // No processed delivery holds bytes to scrub any more.
    expect(total('webhookBodies')).toBe(0);

    // The next pass has nothing left to do: it starts where this one stopped.
    await expect(
      retention.scrub({ id: after.body.data.id, days: 30, scrubbedThrough: new Date(through) }),
    ).resolves.toEqual({ messages: 0, events: 0, webhookBodies: 0 });
    // The organization that kept the default (forever) was not touched.
    expect((await settings(other)).body.data.contentScrubbedThrough).toBeNull();
  });
});
