import { inboundMessageOf } from './inbound-message.js';

describe('inboundMessageOf', () => {
  const base = {
    wabaId: '310900000000001',
    phoneNumberId: '402000000000011',
    recipient: '447700900123',
    userId: 'US.1',
    messageId: 'wamid.A',
    eventType: 'messages',
  };

  it('stores the content under the type, in the shape of outbound content, with the reply context as {message_id}', () => {
    const raw = {
      from: '447700900123',
      id: 'wamid.A',
      type: 'text',
      text: { body: 'Where is my parcel?' },
      context: { from: '15550001111', id: 'wamid.ORIGINAL' },
      metadata: {},
      contact: {},
    };
    expect(inboundMessageOf({ ...base, raw })).toEqual({
      wabaId: base.wabaId,
      phoneNumberId: base.phoneNumberId,
      from: '447700900123',
      userId: 'US.1',
      handledBy: null,
      type: 'text',
      content: { text: { body: 'Where is my parcel?' }, context: { message_id: 'wamid.ORIGINAL' } },
      wamid: 'wamid.A',
    });
  });

  it("keeps Meta's object of every other type: media, location, interactive replies, reactions, contacts, buttons", () => {
    const cases: Array<[string, unknown]> = [
      ['image', { id: '1', mime_type: 'image/png', sha256: 'x', caption: 'Box' }],
      ['location', { latitude: 51.5, longitude: -0.12, name: 'Depot' }],
      ['interactive', { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } }],
      ['reaction', { message_id: 'wamid.B', emoji: '👍' }],
      ['contacts', [{ name: { formatted_name: 'Ann' } }]],
      ['button', { payload: 'STOP', text: 'Stop promotions' }],
    ];
    for (const [type, content] of cases)
      expect(inboundMessageOf({ ...base, raw: { type, [type]: content } })?.content).toEqual({ [type]: content });
  });

  it('files a username user (no phone number) under its user id, keeps forwarded flags, and why an item is unsupported', () => {
    const row = inboundMessageOf({
      ...base,
      recipient: null,
      raw: { type: 'unsupported', errors: [{ code: 131051 }], context: { forwarded: true } },
    });
    expect(row).toMatchObject({
      from: null,
      userId: 'US.1',
      type: 'unsupported',
      content: { unsupported: null, errors: [{ code: 131051 }], context: { forwarded: true } },
    });
    expect(inboundMessageOf({ ...base, phoneNumberId: null, raw: { type: 'text' } })).toBeNull();
  });
  it("stores a flow's answer (nfm_reply) with its response_json parsed, linked to the flow message by context", () => {
    const nfm = {
      type: 'nfm_reply',
      nfm_reply: { name: 'flow', body: 'Sent', response_json: '{"flow_token":"ORD-7781","slot":"am"}' },
    };
    const row = inboundMessageOf({
      ...base,
      raw: { type: 'interactive', interactive: nfm, context: { from: '15550001111', id: 'wamid.FLOW' } },
    });
    expect(row?.content).toEqual({
      interactive: { ...nfm, nfm_reply: { ...nfm.nfm_reply, response: { flow_token: 'ORD-7781', slot: 'am' } } },
      context: { message_id: 'wamid.FLOW' },
    });
    // Not JSON, or JSON but not an object: kept as Meta sent it, nothing added.
    for (const response_json of ['{not json', '"a string"', '[1]']) {
      const raw = { type: 'interactive', interactive: { ...nfm, nfm_reply: { ...nfm.nfm_reply, response_json } } };
      expect(inboundMessageOf({ ...base, raw })?.content).toEqual({ interactive: raw.interactive });
    }
  });
});

describe('inboundMessageOf: who handled the conversation', () => {
  const item = {
    wabaId: '310900000000001',
    phoneNumberId: '402000000000011',
    recipient: '447700900123',
    userId: null,
    messageId: 'wamid.S',
    raw: { type: 'text', text: { body: 'Hello agent' } },
  };

  it('marks a message that came on `standby` as handled by Meta Business Agent, and one on `messages` as not', () => {
    expect(inboundMessageOf({ ...item, eventType: 'standby' })?.handledBy).toBe('meta_business_agent');
    expect(inboundMessageOf({ ...item, eventType: 'messages' })?.handledBy).toBeNull();
  });
});
