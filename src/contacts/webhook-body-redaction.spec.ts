import { redactContact } from './webhook-body-redaction.js';

const CONTACT = '447700900456';
const OTHER = '447700900999';

const body = (value: Record<string, unknown>, entries = 1) =>
  Buffer.from(
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: Array.from({ length: entries }, () => ({
        id: '310000000000001',
        changes: [
          { field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: '1' }, ...value } },
        ],
      })),
    }),
  );

const message = (from: string, text: string) => ({ from, id: `wamid.${from}`, type: 'text', text: { body: text } });

describe('redactContact: a raw webhook body without one contact', () => {
  it('keeps a body that does not name the contact byte for byte', () => {
    expect(redactContact(body({ messages: [message(OTHER, 'hi')] }), [CONTACT])).toEqual({ kind: 'unchanged' });
  });

  it("takes the contact's items out of a batch and keeps the other user's, in order", () => {
    const raw = body({
      contacts: [
        { wa_id: CONTACT, profile: { name: 'Zelda' } },
        { wa_id: OTHER, profile: { name: 'Bob' } },
      ],
      messages: [message(CONTACT, 'secret'), message(OTHER, 'hello')],
    });
    const out = redactContact(raw, [CONTACT]);
    expect(out.kind).toBe('rewritten');
    if (out.kind !== 'rewritten') return;
    expect(out.removed).toBe(2);
    const text = out.body.toString('utf8');
    expect(text).not.toContain(CONTACT);
    expect(text).not.toContain('Zelda');
    expect(text).not.toContain('secret');
    const kept = JSON.parse(text) as { entry: { changes: { value: Record<string, unknown> }[] }[] };
    expect(kept.entry[0]!.changes[0]!.value).toEqual({
      messaging_product: 'whatsapp',
      metadata: { phone_number_id: '1' },
      contacts: [{ wa_id: OTHER, profile: { name: 'Bob' } }],
      messages: [message(OTHER, 'hello')],
    });
  });

  it('deletes a body whose every item was the contact’s, by phone number or by user id', () => {
    expect(redactContact(body({ statuses: [{ id: 'w', status: 'read', recipient_id: CONTACT }] }), [CONTACT])).toEqual({
      kind: 'deleted',
      removed: 1,
    });
    const byUserId = body({ messages: [{ from_user_id: 'US.123', id: 'w', type: 'text', text: { body: 'x' } }] });
    expect(redactContact(byUserId, ['US.123']).kind).toBe('deleted');
  });

  it('drops a change that names the contact outside any item, and a body that is not JSON', () => {
    const raw = Buffer.from(
      JSON.stringify({
        entry: [
          {
            id: '1',
            changes: [
              { field: 'x', value: { user: CONTACT } },
              { field: 'messages', value: { messages: [message(OTHER, 'ok')] } },
            ],
          },
        ],
      }),
    );
    const out = redactContact(raw, [CONTACT]);
    expect(out.kind).toBe('rewritten');
    expect(out.kind === 'rewritten' && out.body.toString()).not.toContain(CONTACT);
    expect(redactContact(Buffer.from(`not json ${CONTACT}`), [CONTACT])).toEqual({ kind: 'deleted', removed: 1 });
  });
});
