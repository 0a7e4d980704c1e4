import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { whereInDatabase } from '../utils/db-search.js';
import { startStack, type Stack } from '../utils/stack.js';
import {
  helloWorld,
  joinOrganization,
  onboard,
  recipient,
  simControl,
  simInbound,
  type OnboardedTenant,
} from '../utils/factories.js';
import { postWebhook, unixNow, waitFor } from '../utils/webhooks.js';

jest.setTimeout(180_000);

/**
 * A customer's end user asks the business for a copy of their data, then for its erasure (issue 41): the console's
 * export and erase of one contact, against the real API, worker and simulator, proven by searching the whole database.
 */
describe('A contact’s data: export and erasure', () => {
  let stack: Stack;
  let t: OnboardedTenant;
  let other: OnboardedTenant;

  const contactPath = (tenant: OnboardedTenant, who: string) =>
    `/business-accounts/${tenant.account.wabaId}/contacts/${who}`;

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    [t, other] = await Promise.all([onboard(stack, 'Erasure Org'), onboard(stack, 'Other Erasure Org')]);
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('exports every message both ways with its statuses, then erases every trace of the contact and keeps the bystander', async () => {
    const contact = recipient();
    const bystander = recipient();
    const word = `quokka${randomBytes(5).toString('hex')}`;
    const name = `Zelda${randomBytes(4).toString('hex')}`;
    const otherWord = `wombat${randomBytes(5).toString('hex')}`;

    // The contact writes (the simulator's webhook), a business reply goes out and is read.
    const first = await simInbound(stack, t, { from: contact, text: `My secret is ${word}` });
    const sent = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, contact));
    expect(sent.status).toBe(200);
    // One webhook body holding both users' messages (Meta batches them): the bystander's must survive the erasure.
    const mixedWamid = `wamid.${randomBytes(12).toString('hex')}`;
    const bystanderWamid = `wamid.${randomBytes(12).toString('hex')}`;
    const mixed = await postWebhook(stack, {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: t.account.wabaId,
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550001111', phone_number_id: t.account.phoneNumberId },
                contacts: [
                  { profile: { name }, wa_id: contact },
                  { profile: { name: 'Bystander' }, wa_id: bystander },
                ],
                messages: [
                  {
                    from: contact,
                    id: mixedWamid,
                    timestamp: String(unixNow()),
                    type: 'text',
                    text: { body: `Also ${word}` },
                  },
                  {
                    from: bystander,
                    id: bystanderWamid,
                    timestamp: String(unixNow()),
                    type: 'text',
                    text: { body: `Hello ${otherWord}` },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    expect(mixed.status).toBe(200);
    // A block (audit-logged with the number in clear) and a marketing stop.
    await waitFor(async () => {
      const res = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/phone-numbers/${t.account.phoneNumberId}/blocked-users`)
        .set('cookie', t.operator.cookie)
        .send({ users: [contact] });
      return res.status === 200 ? res : undefined;
    }, 'the block');
    await simControl(stack, 'user-preferences', {
      wabaId: t.account.wabaId,
      phoneNumberId: t.account.phoneNumberId,
      waId: contact,
      value: 'stop',
    });

    // Everything processed: the outbound message read, both inbound messages and the preference stored.
    const exported = await waitFor(async () => {
      const res = await stack.http.get(`${contactPath(t, contact)}/export`).set('cookie', t.operator.cookie);
      const doc = res.body.data;
      const outbound = doc?.messages?.find((m: { direction: string }) => m.direction === 'outbound');
      return doc?.messages?.length === 3 && outbound?.status === 'read' && doc.marketingPreferences.length === 1
        ? doc
        : undefined;
    }, 'the export with both directions, the statuses and the preference');
    expect(exported.messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          direction: 'inbound',
          from: contact,
          upstreamMessageId: first.wamid,
          content: { text: { body: `My secret is ${word}` } },
        }),
        expect.objectContaining({ direction: 'inbound', upstreamMessageId: mixedWamid }),
        expect.objectContaining({
          direction: 'outbound',
          to: contact,
          templateName: 'hello_world',
          sentAt: expect.any(String),
          readAt: expect.any(String),
          statusHistory: expect.arrayContaining([
            expect.objectContaining({ status: 'delivered' }),
            expect.objectContaining({ status: 'read' }),
          ]),
        }),
      ]),
    );
    expect(exported.blocks).toEqual([expect.objectContaining({ user: contact })]);
    expect(exported.marketingPreferences).toEqual([expect.objectContaining({ user: contact, value: 'stop' })]);
    expect(exported.events.some((e: { recipient: string }) => e.recipient === contact)).toBe(true);
    expect(JSON.stringify(exported)).not.toContain(otherWord);
    expect(exported.nextAfter).toBeNull();
    // Paged: one message per page, the cursor leads to the next.
    const page1 = await stack.http
      .get(`${contactPath(t, contact)}/export`)
      .query({ limit: 1 })
      .set('cookie', t.operator.cookie);
    expect(page1.body.data.messages).toHaveLength(1);
    const page2 = await stack.http
      .get(`${contactPath(t, contact)}/export`)
      .query({ limit: 1, after: page1.body.data.nextAfter })
      .set('cookie', t.operator.cookie);
    expect(page2.body.data.messages[0].id).toBeGreaterThan(page1.body.data.messages[0].id);

    // Before: the number and the words are stored in many places.
    expect((await whereInDatabase(stack, contact)).length).toBeGreaterThan(3);
    expect((await whereInDatabase(stack, word)).length).toBeGreaterThan(1);
    // Processed deliveries keep no bytes (migration lean_events): the items are in `events`, their one copy.
    expect(await whereInDatabase(stack, word)).not.toContainEqual(expect.objectContaining({ column: 'raw_body' }));

    const erased = await stack.http.delete(contactPath(t, contact)).set('cookie', t.operator.cookie);
    expect(erased.status).toBe(200);
    expect(erased.body.data).toMatchObject({
      messages: 3,
      events: expect.any(Number),
      // Nothing of the contact is left in a processed delivery to rewrite or delete.
      webhookBodiesRewritten: 0,
      webhookBodiesDeleted: 0,
      marketingPreferences: 1,
      blockedUsers: 1,
      conversationWindows: 1,
      auditEntriesScrubbed: 1,
    });
    expect(erased.body.data.events).toBeGreaterThanOrEqual(6);

    // After: nowhere in the database, raw bodies (bytes) included; the name the contact gave neither.
    expect(await whereInDatabase(stack, contact)).toEqual([]);
    expect(await whereInDatabase(stack, word)).toEqual([]);
    expect(await whereInDatabase(stack, name)).toEqual([]);
    // The bystander of the shared body is still there: its own event (the item as Meta sent it) and its own message.
    expect(await whereInDatabase(stack, otherWord)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ table: expect.stringMatching(/^events_/), column: 'raw' }),
        { table: 'messages', column: 'content' },
      ]),
    );

    // The counts stay: the erased messages still count in analytics, without content or address.
    const export2 = await stack.http.get(`${contactPath(t, contact)}/export`).set('cookie', t.operator.cookie);
    expect(export2.body.data.messages).toEqual([]);

    // The audit log: who and the counts, a keyed hash of the contact, never the number.
    const audit = await stack.http.get('/audit-log').set('cookie', t.operator.cookie);
    const entry = audit.body.data.items.find((e: { action: string }) => e.action === 'contact.erased');
    expect(entry).toMatchObject({
      operatorEmail: t.operator.email,
      targetId: t.account.wabaId,
      details: { contact: expect.stringMatching(/^hmac-sha256:[0-9a-f]{32}$/), messages: 3 },
    });
    expect(JSON.stringify(audit.body)).not.toContain(contact);

    // The contact writes again later: stored as usual.
    const again = await simInbound(stack, t, { from: contact, text: 'Back again' });
    const back = await waitFor(async () => {
      const res = await stack.http.get(`${contactPath(t, contact)}/export`).set('cookie', t.operator.cookie);
      return res.body.data?.messages?.length === 1 ? res.body.data : undefined;
    }, 'the new message');
    expect(back.messages[0]).toMatchObject({
      upstreamMessageId: again.wamid,
      content: { text: { body: 'Back again' } },
    });
  });

  it('refuses what is not a phone number or user id (422 naming it), key pairs, members, and other organizations', async () => {
    const bad = await stack.http.delete(contactPath(t, 'not-a-number')).set('cookie', t.operator.cookie);
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: 'phoneOrUserId', message: expect.stringMatching(/phone number/) }]);
    const badExport = await stack.http.get(`${contactPath(t, '+44 7700')}/export`).set('cookie', t.operator.cookie);
    expect(badExport.status).toBe(422);

    const contact = recipient();
    await simInbound(stack, t, { from: contact, text: 'Keep me' });
    await waitFor(async () => {
      const res = await stack.http.get(`${contactPath(t, contact)}/export`).set('cookie', t.operator.cookie);
      return res.body.data?.messages?.length === 1 ? true : undefined;
    }, 'the message');

    const byKey = await stack.http.delete(contactPath(t, contact)).set(t.key.headers);
    expect(byKey.status).toBe(401);
    const member = await joinOrganization(stack, t.operator, 'member');
    const byMember = await stack.http.delete(contactPath(t, contact)).set('cookie', member.cookie);
    expect(byMember.status).toBe(403);
    const byOther = await stack.http.delete(contactPath(t, contact)).set('cookie', other.operator.cookie);
    expect(byOther.status).toBe(404);
    const otherExport = await stack.http.get(`${contactPath(t, contact)}/export`).set('cookie', other.operator.cookie);
    expect(otherExport.status).toBe(404);

    // Nothing changed.
    const still = await stack.http.get(`${contactPath(t, contact)}/export`).set('cookie', t.operator.cookie);
    expect(still.body.data.messages).toEqual([expect.objectContaining({ content: { text: { body: 'Keep me' } } })]);
  });
});
