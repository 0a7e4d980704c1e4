import { classify, inboundMediaOf, kindOfField, unixTime, type EventDraft } from './classify.js';

const WABA = '310987654321098';
const PHONE = '402345678901234';
const metadata = { display_phone_number: '447700900500', phone_number_id: PHONE };

const messagesChange = (value: Record<string, unknown>) => ({
  field: 'messages',
  value: { messaging_product: 'whatsapp', metadata, ...value },
});
const payload = (...entries: unknown[]) => ({ object: 'whatsapp_business_account', entry: entries });

const delivered = {
  id: 'wamid.A',
  status: 'delivered',
  timestamp: '1767182405',
  recipient_id: '447700900123',
  biz_opaque_callback_data: 'bm:17',
};
const failed = {
  id: 'wamid.B',
  status: 'failed',
  timestamp: '1767182410',
  recipient_id: '447700900456',
  errors: [
    {
      code: 131047,
      title: 'Re-engagement message',
      message: 'Re-engagement message',
      error_data: {
        details:
          'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
      },
    },
  ],
};
const inbound = {
  from: '447700900123',
  id: 'wamid.IN1',
  timestamp: '1767182500',
  type: 'text',
  text: { body: 'Can I change the delivery slot?' },
};
const templateRejected = {
  event: 'REJECTED',
  message_template_id: 1203344556677889,
  message_template_name: 'parcel_update',
  message_template_language: 'en_GB',
  reason: 'INVALID_FORMAT',
  message_template_category: 'UTILITY',
};

const only = (p: unknown): EventDraft => {
  const { drafts } = classify(p);
  expect(drafts).toHaveLength(1);
  return drafts[0]!;
};

describe('classify: statuses', () => {
  it('turns a delivered status into a status_update carrying message id, recipient and time', () => {
    const e = only(payload({ id: WABA, changes: [messagesChange({ statuses: [delivered] })] }));
    expect(e).toMatchObject({
      wabaId: WABA,
      phoneNumberId: PHONE,
      eventType: 'messages',
      kind: 'status_update',
      title: 'Message delivered',
      status: 'delivered',
      recipient: '447700900123',
      messageId: 'wamid.A',
      errorCode: null,
      dedupeKey: 'status:wamid.A:delivered:1767182405',
    });
    expect(e.upstreamTimestamp?.toISOString()).toBe('2025-12-31T12:00:05.000Z');
    expect(e.raw).toEqual({ ...delivered, metadata });
  });

  it('keeps the reason of an asynchronous failure: code, title and detail', () => {
    const e = only(payload({ id: WABA, changes: [messagesChange({ statuses: [failed] })] }));
    expect(e).toMatchObject({
      kind: 'status_update',
      status: 'failed',
      title: 'Message failed: Re-engagement message (131047)',
      errorCode: 131047,
      errorTitle: 'Re-engagement message',
      errorDetail:
        'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
    });
  });

  it('falls back to the error message when error_data is missing', () => {
    const e = only(
      payload({
        id: WABA,
        changes: [
          messagesChange({ statuses: [{ ...failed, errors: [{ code: 131026, message: 'Message undeliverable' }] }] }),
        ],
      }),
    );
    expect(e).toMatchObject({
      title: 'Message failed: Message undeliverable (131026)',
      errorCode: 131026,
      errorDetail: 'Message undeliverable',
    });
  });

  it('titles sent, read and played statuses', () => {
    const statuses = ['sent', 'read', 'played'].map((status, i) => ({
      ...delivered,
      status,
      timestamp: String(1767182400 + i),
    }));
    const { drafts } = classify(payload({ id: WABA, changes: [messagesChange({ statuses })] }));
    expect(drafts.map((d) => [d.title, d.status])).toEqual([
      ['Message sent', 'sent'],
      ['Message read', 'read'],
      ['Message played', 'played'],
    ]);
  });

  it('gives the same status at another time a different key, and a redelivery the same key', () => {
    const first = only(payload({ id: WABA, changes: [messagesChange({ statuses: [delivered] })] }));
    const again = only(payload({ id: WABA, changes: [messagesChange({ statuses: [{ ...delivered }] })] }));
    const later = only(
      payload({ id: WABA, changes: [messagesChange({ statuses: [{ ...delivered, timestamp: '1767182999' }] })] }),
    );
    expect(again.dedupeKey).toBe(first.dedupeKey);
    expect(later.dedupeKey).not.toBe(first.dedupeKey);
  });
});

describe('classify: inbound messages', () => {
  it('turns a customer message into an inbound_message from the sender, with the contact', () => {
    const contacts = [{ profile: { name: 'Priya S' }, wa_id: '447700900123' }];
    const e = only(payload({ id: WABA, changes: [messagesChange({ contacts, messages: [inbound] })] }));
    expect(e).toMatchObject({
      kind: 'inbound_message',
      title: 'Inbound text from 447700900123',
      status: null,
      recipient: '447700900123',
      messageId: 'wamid.IN1',
      phoneNumberId: PHONE,
      dedupeKey: 'inbound:wamid.IN1',
    });
    expect(e.raw).toMatchObject({ text: { body: 'Can I change the delivery slot?' }, contact: contacts[0], metadata });
    expect(e.upstreamTimestamp?.getTime()).toBe(1767182500 * 1000);
  });

  it('keeps the error of an unsupported inbound type', () => {
    const unsupported = {
      from: '447700900123',
      id: 'wamid.IN2',
      timestamp: '1767182501',
      type: 'unsupported',
      errors: [{ code: 131051, title: 'Message type unknown' }],
    };
    const e = only(payload({ id: WABA, changes: [messagesChange({ messages: [unsupported] })] }));
    expect(e).toMatchObject({
      title: 'Inbound unsupported from 447700900123',
      errorCode: 131051,
      errorTitle: 'Message type unknown',
    });
  });
});

describe('classify: template and account fields', () => {
  const fieldEntry = (field: string, value: unknown, time = 1767183000) => ({
    id: WABA,
    time,
    changes: [{ field, value }],
  });

  it('turns a template decision into template_status with the reason in the title', () => {
    const e = only(payload(fieldEntry('message_template_status_update', templateRejected)));
    expect(e).toMatchObject({
      kind: 'template_status',
      eventType: 'message_template_status_update',
      title: 'Template parcel_update (en_GB) rejected: INVALID_FORMAT',
      status: null,
      messageId: null,
      recipient: null,
    });
    expect(e.upstreamTimestamp?.getTime()).toBe(1767183000 * 1000);
    expect(e.raw).toEqual(templateRejected);
    expect(e.dedupeKey).toMatch(/^message_template_status_update:310987654321098:1767183000:[0-9a-f]{64}$/);
  });

  it('titles approvals (reason NONE left out), pauses and other template fields', () => {
    const titles = [
      ['message_template_status_update', { ...templateRejected, event: 'APPROVED', reason: 'NONE' }],
      ['message_template_status_update', { ...templateRejected, event: 'PAUSED', reason: 'LOW_QUALITY' }],
      ['message_template_status_update', { ...templateRejected, event: 'IN_APPEAL', reason: undefined }],
      [
        'message_template_quality_update',
        { ...templateRejected, previous_quality_score: 'GREEN', new_quality_score: 'YELLOW' },
      ],
      ['template_category_update', { ...templateRejected, previous_category: 'UTILITY', new_category: 'MARKETING' }],
      ['message_template_components_update', { ...templateRejected }],
      ['message_template_something_new', { foo: 1 }],
    ].map(([field, value]) => only(payload(fieldEntry(field as string, value))));
    expect(titles.map((d) => d.title)).toEqual([
      'Template parcel_update (en_GB) approved',
      'Template parcel_update (en_GB) paused: LOW_QUALITY',
      'Template parcel_update (en_GB) in appeal',
      'Template parcel_update (en_GB) quality: GREEN → YELLOW',
      'Template parcel_update (en_GB) category: UTILITY → MARKETING',
      'Template parcel_update (en_GB) components updated',
      'Update: message_template_something_new',
    ]);
    expect(titles.every((d) => d.kind === 'template_status')).toBe(true);
  });

  it('classifies account-level fields, known and unknown, as account_update', () => {
    const drafts = [
      [
        'account_update',
        {
          event: 'ACCOUNT_RESTRICTION',
          restriction_info: [{ restriction_type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION' }],
        },
      ],
      [
        'phone_number_quality_update',
        {
          display_phone_number: '447700900500',
          event: 'THROUGHPUT_UPGRADE',
          max_daily_conversations_per_business: 'TIER_10K',
        },
      ],
      ['phone_number_name_update', { display_phone_number: '447700900500', decision: 'APPROVED' }],
      ['account_review_update', { decision: 'APPROVED' }],
      ['business_capability_update', { max_daily_conversation_per_phone: 1000 }],
      ['account_alerts', { alert_type: 'OBA_APPROVED' }],
      ['brand_new_field', { anything: true }],
    ].map(([field, value]) => only(payload(fieldEntry(field as string, value))));
    expect(drafts.map((d) => [d.kind, d.eventType, d.title])).toEqual([
      ['account_update', 'account_update', 'Account update: ACCOUNT_RESTRICTION: RESTRICTED_ADD_PHONE_NUMBER_ACTION'],
      [
        'account_update',
        'phone_number_quality_update',
        'Phone number quality update: THROUGHPUT_UPGRADE (447700900500), limit TIER_10K',
      ],
      ['account_update', 'phone_number_name_update', 'Phone number name update: APPROVED (447700900500)'],
      ['account_update', 'account_review_update', 'Account review: APPROVED'],
      ['account_update', 'business_capability_update', 'Business capability update'],
      ['account_update', 'account_alerts', 'Account alert: OBA_APPROVED'],
      ['account_update', 'brand_new_field', 'Update: brand_new_field'],
    ]);
  });

  it('gives a redelivered identical change the same key, and a changed value or time another one', () => {
    const a = only(payload(fieldEntry('account_update', { event: 'ACCOUNT_VIOLATION' })));
    const b = only(payload(fieldEntry('account_update', { event: 'ACCOUNT_VIOLATION' })));
    const c = only(payload(fieldEntry('account_update', { event: 'ACCOUNT_DELETED' })));
    const d = only(payload(fieldEntry('account_update', { event: 'ACCOUNT_VIOLATION' }, 1767183001)));
    expect(b.dedupeKey).toBe(a.dedupeKey);
    expect(new Set([a.dedupeKey, c.dedupeKey, d.dedupeKey]).size).toBe(3);
  });

  it('maps field names to kinds', () => {
    expect(kindOfField('message_template_status_update')).toBe('template_status');
    expect(kindOfField('template_category_update')).toBe('template_status');
    expect(kindOfField('template_anything')).toBe('template_status');
    expect(kindOfField('account_update')).toBe('account_update');
    expect(kindOfField('security')).toBe('account_update');
  });
});

describe('classify: batches', () => {
  it('produces one event per item across every entry, change, status and message', () => {
    const p = payload(
      {
        id: WABA,
        changes: [
          messagesChange({ statuses: [delivered, failed, { ...delivered, id: 'wamid.C', status: 'read' }] }),
          messagesChange({ messages: [inbound, { ...inbound, id: 'wamid.IN3', from: '447700900999', type: 'image' }] }),
        ],
      },
      {
        id: '310000000000002',
        time: 1767183000,
        changes: [
          { field: 'message_template_status_update', value: templateRejected },
          { field: 'account_update', value: { event: 'PARTNER_ADDED' } },
        ],
      },
      {
        id: '310000000000003',
        changes: [
          messagesChange({ statuses: [{ ...delivered, id: 'wamid.D' }], messages: [{ ...inbound, id: 'wamid.IN4' }] }),
        ],
      },
    );
    const { drafts, anomalies } = classify(p);
    expect(anomalies).toEqual([]);
    expect(drafts.map((d) => [d.wabaId, d.kind, d.messageId ?? d.eventType])).toEqual([
      [WABA, 'status_update', 'wamid.A'],
      [WABA, 'status_update', 'wamid.B'],
      [WABA, 'status_update', 'wamid.C'],
      [WABA, 'inbound_message', 'wamid.IN1'],
      [WABA, 'inbound_message', 'wamid.IN3'],
      ['310000000000002', 'template_status', 'message_template_status_update'],
      ['310000000000002', 'account_update', 'account_update'],
      ['310000000000003', 'status_update', 'wamid.D'],
      ['310000000000003', 'inbound_message', 'wamid.IN4'],
    ]);
    expect(drafts[4]!.title).toBe('Inbound image from 447700900999');
    expect(new Set(drafts.map((d) => d.dedupeKey)).size).toBe(drafts.length);
  });
});

describe('classify: unexpected shapes never throw', () => {
  it('keeps a messages change with neither statuses nor messages (system errors) as one event', () => {
    const e = only(
      payload({
        id: WABA,
        time: 1767183000,
        changes: [messagesChange({ errors: [{ code: 131000, title: 'Something went wrong' }] })],
      }),
    );
    expect(e).toMatchObject({
      kind: 'account_update',
      eventType: 'messages',
      title: 'Error 131000: Something went wrong',
      errorCode: 131000,
      phoneNumberId: PHONE,
    });
  });

  it('keeps statuses with missing fields, keyed by content, and reports nothing lost', () => {
    const { drafts } = classify(
      payload({
        id: WABA,
        changes: [messagesChange({ statuses: [{ status: 'delivered' }, 'junk', { id: 'wamid.X' }] })],
      }),
    );
    expect(drafts).toHaveLength(3);
    expect(drafts.map((d) => d.kind)).toEqual(['status_update', 'status_update', 'status_update']);
    expect(drafts[0]!.dedupeKey).toMatch(/^status:\?:[0-9a-f]{64}$/);
    expect(drafts[1]!.raw).toEqual({ item: 'junk', metadata });
    expect(drafts[2]!.title).toBe('Message status update');
    expect(new Set(drafts.map((d) => d.dedupeKey)).size).toBe(3);
  });

  it('stores an entry without changes, a change without field and a non-object entry, and reports them', () => {
    const { drafts, anomalies } = classify(
      payload({ id: WABA, time: 5 }, { id: WABA, changes: [{ value: { x: 1 } }, 7] }, 'oops'),
    );
    expect(drafts.map((d) => [d.kind, d.eventType, d.title])).toEqual([
      ['account_update', 'unknown', 'Update: unknown'],
      ['account_update', 'unknown', 'Update: unknown'],
      ['account_update', 'unknown', 'Update: unknown'],
      ['account_update', 'unknown', 'Update: unknown'],
    ]);
    expect(anomalies.length).toBeGreaterThanOrEqual(4);
    expect(new Set(drafts.map((d) => d.dedupeKey)).size).toBe(4);
  });

  it('reports a payload without entries and produces nothing', () => {
    expect(classify({ object: 'whatsapp_business_account' })).toEqual({
      drafts: [],
      anomalies: ['payload has no entry array'],
    });
    expect(classify(null).drafts).toEqual([]);
  });

  it('reads unix seconds given as strings or integers, and nothing else', () => {
    expect(unixTime('1767182405')?.getTime()).toBe(1767182405000);
    expect(unixTime(1767182405)?.getTime()).toBe(1767182405000);
    expect(unixTime('2026-01-01')).toBeNull();
    expect(unixTime(undefined)).toBeNull();
    expect(unixTime(-1)).toBeNull();
  });
});

describe('classify: inbound media and other types', () => {
  const message = (type: string, content: object) => ({
    from: '447700900123',
    id: `wamid.${type}`,
    timestamp: '1767182500',
    type,
    [type]: content,
  });
  const draftOf = (m: object) => only(payload({ id: WABA, changes: [messagesChange({ messages: [m] })] }));

  it('keeps the media id, MIME type, caption and file name of an inbound document', () => {
    const doc = message('document', {
      id: '1037543291543636',
      mime_type: 'application/pdf',
      sha256: 'abc',
      caption: 'Invoice',
      filename: 'invoice.pdf',
    });
    const e = draftOf(doc);
    expect(e.title).toBe('Inbound document from 447700900123: invoice.pdf');
    expect(inboundMediaOf(e.raw)).toEqual({
      id: '1037543291543636',
      mimeType: 'application/pdf',
      sha256: 'abc',
      caption: 'Invoice',
      filename: 'invoice.pdf',
    });
  });

  it('titles replies, reactions and locations by what they say; they carry no media', () => {
    const reply = draftOf(message('interactive', { type: 'list_reply', list_reply: { id: 'a', title: 'Morning' } }));
    expect(reply.title).toBe('Inbound interactive from 447700900123: Morning');
    expect(draftOf(message('reaction', { message_id: 'wamid.X', emoji: '👍' })).title).toBe(
      'Inbound reaction from 447700900123: 👍',
    );
    expect(draftOf(message('location', { latitude: 1, longitude: 2 })).title).toBe(
      'Inbound location from 447700900123',
    );
    expect(inboundMediaOf(reply.raw)).toBeNull();
    expect(inboundMediaOf(message('image', { mime_type: 'image/png' }))).toBeNull();
  });
});

describe('classify: Meta fidelity 2026 (business-scoped user ids, pricing, account health)', () => {
  const fieldOnly = (field: string, value: Record<string, unknown>) =>
    only(payload({ id: WABA, time: 1767183000, changes: [{ field, value }] }));

  it('keeps a status sent to a user with only a business-scoped user id: recipient null, userId set, matched by wamid', () => {
    const status = {
      id: 'wamid.U1',
      status: 'delivered',
      timestamp: '1767182405',
      recipient_user_id: 'US.13491208655302741918',
    };
    const e = only(
      payload({
        id: WABA,
        changes: [messagesChange({ contacts: [{ user_id: 'US.13491208655302741918' }], statuses: [status] })],
      }),
    );
    expect(e).toMatchObject({
      kind: 'status_update',
      status: 'delivered',
      recipient: null,
      userId: 'US.13491208655302741918',
      messageId: 'wamid.U1',
      title: 'Message delivered',
    });
    expect(e.dedupeKey).toBe('status:wamid.U1:delivered:1767182405');
  });

  it('takes a status user id from the contacts entry when the status itself carries none, and keeps the phone number when both come', () => {
    const status = { id: 'wamid.U2', status: 'read', timestamp: '1767182405', recipient_id: '447700900123' };
    const e = only(
      payload({
        id: WABA,
        changes: [
          messagesChange({ contacts: [{ wa_id: '447700900123', user_id: 'GB.1502576394655843' }], statuses: [status] }),
        ],
      }),
    );
    expect(e).toMatchObject({ recipient: '447700900123', userId: 'GB.1502576394655843' });
  });

  it("never lends one user's contact to a status of another user in the same batch", () => {
    const statuses = [
      { id: 'wamid.U3', status: 'delivered', timestamp: '1767182405', recipient_id: '447700900123' },
      { id: 'wamid.U4', status: 'delivered', timestamp: '1767182405', recipient_id: '447700900456' },
    ];
    const { drafts } = classify(
      payload({
        id: WABA,
        changes: [messagesChange({ contacts: [{ wa_id: '447700900123', user_id: 'GB.1' }], statuses })],
      }),
    );
    expect(drafts.map((d) => [d.recipient, d.userId])).toEqual([
      ['447700900123', 'GB.1'],
      ['447700900456', null],
    ]);
  });

  it('keeps an inbound message without `from` (a user with a username): recipient null, userId from the message or its contact', () => {
    const message = { id: 'wamid.IN9', timestamp: '1767182500', type: 'text', text: { body: 'hi' } };
    const viaContact = only(
      payload({
        id: WABA,
        changes: [
          messagesChange({
            contacts: [{ profile: { name: 'Sam', username: '@sam' }, user_id: 'US.777' }],
            messages: [message],
          }),
        ],
      }),
    );
    expect(viaContact).toMatchObject({
      kind: 'inbound_message',
      recipient: null,
      userId: 'US.777',
      title: 'Inbound text from US.777',
      dedupeKey: 'inbound:wamid.IN9',
    });
    expect(viaContact.raw).toMatchObject({ contact: { user_id: 'US.777' } });
    const viaMessage = only(
      payload({
        id: WABA,
        changes: [messagesChange({ messages: [{ ...message, id: 'wamid.IN10', from_user_id: 'US.888' }] })],
      }),
    );
    expect(viaMessage).toMatchObject({ recipient: null, userId: 'US.888' });
    expect(
      only(
        payload({
          id: WABA,
          changes: [messagesChange({ contacts: [{ wa_id: '447700900123' }], messages: [inbound] })],
        }),
      ).userId,
    ).toBeNull();
  });

  it("keeps a status's pricing object in Meta's shape, and nothing for statuses without one", () => {
    const pricing = { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' };
    expect(
      only(payload({ id: WABA, changes: [messagesChange({ statuses: [{ ...delivered, pricing }] })] })).pricing,
    ).toEqual(pricing);
    const free = only(
      payload({
        id: WABA,
        changes: [
          messagesChange({
            statuses: [
              { ...delivered, pricing: { pricing_model: 'PMP', type: 'free_entry_point', category: 'service' } },
            ],
          }),
        ],
      }),
    );
    expect(free.pricing).toEqual({
      pricing_model: 'PMP',
      type: 'free_entry_point',
      category: 'service',
      billable: null,
    });
    expect(only(payload({ id: WABA, changes: [messagesChange({ statuses: [delivered] })] })).pricing).toBeNull();
    expect(only(payload({ id: WABA, changes: [messagesChange({ statuses: [failed] })] })).pricing).toBeNull();
  });

  it('records webhook-level value.errors with error_data.details', () => {
    const e = only(
      payload({
        id: WABA,
        changes: [
          messagesChange({
            errors: [
              {
                code: 131000,
                title: 'Something went wrong',
                message: 'Something went wrong',
                error_data: { details: 'Unknown error, try again' },
              },
            ],
          }),
        ],
      }),
    );
    expect(e).toMatchObject({
      kind: 'account_update',
      errorCode: 131000,
      errorTitle: 'Something went wrong',
      errorDetail: 'Unknown error, try again',
    });
  });

  it('classifies phone_number_quality_update as account_update, titled with event, number and limit', () => {
    const e = fieldOnly('phone_number_quality_update', {
      display_phone_number: '15550783881',
      event: 'FLAGGED',
      current_limit: 'TIER_2K',
    });
    expect(e).toMatchObject({
      kind: 'account_update',
      eventType: 'phone_number_quality_update',
      title: 'Phone number quality update: FLAGGED (15550783881), limit TIER_2K',
      recipient: null,
      userId: null,
    });
    expect(e.upstreamTimestamp?.toISOString()).toBe('2025-12-31T12:10:00.000Z');
    const limit = fieldOnly('phone_number_quality_update', {
      display_phone_number: '15550783881',
      event: 'UPGRADE',
      old_limit: 'TIER_2K',
      current_limit: 'TIER_10K',
      max_daily_conversations_per_business: 'TIER_10K',
    });
    expect(limit.title).toBe('Phone number quality update: UPGRADE (15550783881), limit TIER_10K');
  });

  it('classifies account_update: ban, restriction, violation, pricing tier and others as account_update', () => {
    const titles = [
      { event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: 'DISABLE', waba_ban_date: 'December 9, 2026' } },
      {
        event: 'ACCOUNT_RESTRICTION',
        restriction_info: [
          { restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: '2026-12-19T13:59:20+0000' },
        ],
      },
      { event: 'ACCOUNT_VIOLATION', violation_info: { violation_type: 'SCAM' } },
      {
        event: 'VOLUME_BASED_PRICING_TIER_UPDATE',
        volume_tier_info: {
          tier_update_time: 1767183000,
          pricing_category: 'UTILITY',
          tier: '25000:50000',
          effective_month: '2026-12',
          region: 'India',
        },
      },
      { event: 'ACCOUNT_DELETED' },
    ].map((v) => fieldOnly('account_update', v));
    expect(titles.map((d) => [d.kind, d.title])).toEqual([
      ['account_update', 'Account update: DISABLED_UPDATE: DISABLE'],
      ['account_update', 'Account update: ACCOUNT_RESTRICTION: RESTRICTED_BIZ_INITIATED_MESSAGING'],
      ['account_update', 'Account update: ACCOUNT_VIOLATION: SCAM'],
      ['account_update', 'Account update: VOLUME_BASED_PRICING_TIER_UPDATE: UTILITY tier 25000:50000 (India)'],
      ['account_update', 'Account update: ACCOUNT_DELETED'],
    ]);
  });

  it('classifies account_alerts and phone_number_name_update as account_update', () => {
    const alert = fieldOnly('account_alerts', {
      entity_type: 'PHONE_NUMBER',
      entity_id: '402345678901234',
      alert_severity: 'WARNING',
      alert_status: 'ACTIVE',
      alert_type: 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED',
      alert_description: 'Your eligibility for increased messaging limits was deferred.',
    });
    expect(alert).toMatchObject({
      kind: 'account_update',
      eventType: 'account_alerts',
      title: 'Account alert: INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED (ACTIVE)',
    });
    const name = fieldOnly('phone_number_name_update', {
      display_phone_number: '15550783881',
      decision: 'APPROVED',
      requested_verified_name: 'Parcel Co',
      rejection_reason: 'NONE',
    });
    expect(name).toMatchObject({
      kind: 'account_update',
      eventType: 'phone_number_name_update',
      title: 'Phone number name update: APPROVED (15550783881): Parcel Co',
    });
  });

  it('classifies message_template_quality_update and template_category_update as template_status', () => {
    const quality = fieldOnly('message_template_quality_update', {
      previous_quality_score: 'GREEN',
      new_quality_score: 'RED',
      message_template_id: 1203344556677889,
      message_template_name: 'parcel_update',
      message_template_language: 'en_GB',
    });
    expect(quality).toMatchObject({
      kind: 'template_status',
      eventType: 'message_template_quality_update',
      title: 'Template parcel_update (en_GB) quality: GREEN → RED',
    });
    const category = fieldOnly('template_category_update', {
      message_template_id: 1203344556677889,
      message_template_name: 'parcel_update',
      message_template_language: 'en_GB',
      previous_category: 'UTILITY',
      new_category: 'MARKETING',
    });
    expect(category).toMatchObject({
      kind: 'template_status',
      eventType: 'template_category_update',
      title: 'Template parcel_update (en_GB) category: UTILITY → MARKETING',
    });
  });
});

describe('classify: user_preferences (marketing stops)', () => {
  const preferences = (items: unknown[]) =>
    payload({
      id: WABA,
      changes: [
        {
          field: 'user_preferences',
          value: {
            messaging_product: 'whatsapp',
            metadata,
            contacts: [{ wa_id: '16505551234', profile: { name: 'Ana' } }],
            user_preferences: items,
          },
        },
      ],
    });

  it("turns each item into an account_update of the user, by wa_id and/or user_id, at Meta's time", () => {
    const { drafts, anomalies } = classify(
      preferences([
        {
          wa_id: '16505551234',
          detail: 'User requested to stop marketing messages',
          category: 'marketing_messages',
          value: 'stop',
          timestamp: 1731705721,
        },
        { user_id: 'US.13491208655302741918', category: 'marketing_messages', value: 'resume', timestamp: 1731705800 },
      ]),
    );
    expect(anomalies).toEqual([]);
    expect(drafts).toHaveLength(2);
    expect(drafts[0]).toMatchObject({
      wabaId: WABA,
      phoneNumberId: PHONE,
      eventType: 'user_preferences',
      kind: 'account_update',
      title: 'Marketing messages: stop (16505551234)',
      recipient: '16505551234',
      userId: null,
      upstreamTimestamp: new Date(1731705721_000),
      raw: { wa_id: '16505551234', value: 'stop', metadata },
    });
    expect(drafts[1]).toMatchObject({
      title: 'Marketing messages: resume (US.13491208655302741918)',
      recipient: null,
      userId: 'US.13491208655302741918',
    });
    expect(drafts[0]!.dedupeKey).not.toBe(drafts[1]!.dedupeKey);
    // Meta's redelivery: the same keys.
    expect(
      classify(
        preferences([{ wa_id: '16505551234', category: 'marketing_messages', value: 'stop', timestamp: 1731705721 }]),
      ).drafts[0]!.dedupeKey,
    ).toBe(drafts[0]!.dedupeKey);
  });

  it('keeps a user_preferences change without items as one event', () => {
    expect(only(preferences([]))).toMatchObject({
      eventType: 'user_preferences',
      kind: 'account_update',
      title: 'User preferences update',
    });
  });
});

describe('classify: since mid-2026 (Meta Business Agent, handovers, calls, user id changes, 2026 statuses)', () => {
  const standbyChange = (value: Record<string, unknown>) => ({
    field: 'standby',
    value: { messaging_product: 'whatsapp', metadata, ...value },
  });
  const only = (change: unknown) => classify(payload({ id: WABA, changes: [change] }));

  it("keeps a customer's message on `standby` an inbound message, titled as handled by Meta Business Agent", () => {
    const { drafts, anomalies } = only(
      standbyChange({ contacts: [{ profile: { name: 'Priya' }, wa_id: '447700900123' }], messages: [inbound] }),
    );
    expect(anomalies).toEqual([]);
    expect(drafts).toHaveLength(1);
    expect(drafts[0]).toMatchObject({
      kind: 'inbound_message',
      eventType: 'standby',
      recipient: '447700900123',
      messageId: 'wamid.IN1',
      phoneNumberId: PHONE,
      dedupeKey: 'inbound:wamid.IN1',
    });
    expect(drafts[0]!.title).toMatch(/^Inbound text from 447700900123.*\(handled by Meta Business Agent\)$/);
  });

  it("stores the agent's echoes (message_echoes[], or messages[] sent from the business number) as agent messages, never inbound", () => {
    const echo = {
      from: '447700900500',
      to: '447700900123',
      id: 'wamid.ECHO1',
      timestamp: '1767182600',
      type: 'text',
      text: { body: 'Your parcel is on its way' },
    };
    const { drafts, anomalies } = only(
      standbyChange({ message_echoes: [echo], messages: [{ ...echo, id: 'wamid.ECHO2', to: undefined }] }),
    );
    expect(anomalies).toEqual([]);
    expect(drafts.map((d) => [d.kind, d.messageId, d.recipient])).toEqual([
      ['agent_message', 'wamid.ECHO1', '447700900123'],
      ['agent_message', 'wamid.ECHO2', null],
    ]);
    expect(drafts[0]!.title).toBe('Meta Business Agent sent text to 447700900123');
    expect(drafts.every((d) => d.kind !== 'inbound_message')).toBe(true);
  });

  it('keeps statuses on `standby` as status updates of that field (the effect decides whether one is ours)', () => {
    const { drafts } = only(standbyChange({ statuses: [delivered] }));
    expect(drafts).toEqual([
      expect.objectContaining({
        kind: 'status_update',
        eventType: 'standby',
        status: 'delivered',
        messageId: 'wamid.A',
      }),
    ]);
  });

  it('titles a messaging_handovers change by who holds the conversation now, with no unknown-field anomaly', () => {
    const taken = {
      messaging_product: 'whatsapp',
      metadata,
      contacts: [{ wa_id: '447700900123', user_id: 'US.13491208655302741918' }],
      type: 'control_taken',
      control_taken: {
        previous_owner: { role: 'ai_agent' },
        new_owner: { role: 'escalation_partner', app_id: '1234567890' },
        timestamp: '1767182700',
      },
    };
    const { drafts, anomalies } = only({ field: 'messaging_handovers', value: taken });
    expect(anomalies).toEqual([]);
    expect(drafts).toEqual([
      expect.objectContaining({
        kind: 'handover',
        eventType: 'messaging_handovers',
        status: 'control_taken',
        recipient: '447700900123',
        userId: 'US.13491208655302741918',
        phoneNumberId: PHONE,
        title: 'Conversation with 447700900123: the business app took control from Meta Business Agent',
        upstreamTimestamp: new Date(1767182700 * 1000),
      }),
    ]);
    const passed = only({
      field: 'messaging_handovers',
      value: {
        metadata,
        wa_id: '447700900123',
        pass_thread_control: { new_owner_app_id: '99', previous_owner_app_id: '1' },
      },
    }).drafts[0]!;
    expect(passed.title).toBe('Conversation with 447700900123: app 99 now holds control from app 1');
    // Any shape is stored, titled as well as it can be.
    expect(only({ field: 'messaging_handovers', value: 'garbage' }).drafts[0]).toMatchObject({
      kind: 'handover',
      title: 'Conversation with unknown user: control changed',
    });
  });

  it('stores calls as call events: who, direction, connect/terminate and duration; statuses of business calls too', () => {
    const call = {
      id: 'wacid.ABC',
      from: '447700900123',
      to: '447700900500',
      event: 'connect',
      direction: 'USER_INITIATED',
      timestamp: '1767182800',
    };
    const { drafts, anomalies } = only({
      field: 'calls',
      value: {
        messaging_product: 'whatsapp',
        metadata,
        contacts: [{ profile: { name: 'Priya' }, wa_id: '447700900123' }],
        calls: [call, { ...call, event: 'terminate', status: 'COMPLETED', duration: 42, timestamp: '1767182842' }],
        statuses: [{ id: 'wacid.OUT', status: 'RINGING', recipient_id: '447700900999', timestamp: '1767182900' }],
      },
    });
    expect(anomalies).toEqual([]);
    expect(drafts.map((d) => [d.kind, d.status, d.recipient, d.messageId, d.title])).toEqual([
      ['call', 'connect', '447700900123', 'wacid.ABC', 'Call from 447700900123: connect (user initiated)'],
      ['call', 'terminate', '447700900123', 'wacid.ABC', 'Call from 447700900123 ended (COMPLETED) after 42 s'],
      ['call', 'ringing', '447700900999', 'wacid.OUT', 'Call to 447700900999: ringing'],
    ]);
    expect(new Set(drafts.map((d) => d.dedupeKey)).size).toBe(3);
    expect(drafts[1]!.upstreamTimestamp).toEqual(new Date(1767182842 * 1000));
  });

  it('keeps system messages (a user id change) as inbound system messages titled by their body', () => {
    const system = {
      from: '447700900123',
      id: 'wamid.SYS1',
      timestamp: '1767183000',
      type: 'system',
      system: {
        body: 'User A changed their user id',
        type: 'user_changed_user_id',
        user_id: 'US.2222222222222222222',
        previous_user_id: 'US.1111111111111111111',
      },
    };
    const [draft] = only(messagesChange({ messages: [system] })).drafts;
    expect(draft).toMatchObject({ kind: 'inbound_message', messageId: 'wamid.SYS1' });
    expect(draft!.title).toBe('Inbound system from 447700900123: User A changed their user id');
  });

  it('moves a status whose contacts carry no profile, and keeps an unsupported inbound message as such', () => {
    const { drafts, anomalies } = only(
      messagesChange({
        contacts: [{ wa_id: '447700900123', user_id: 'US.13491208655302741918' }],
        statuses: [delivered],
        messages: [
          {
            from: '447700900123',
            id: 'wamid.U1',
            timestamp: '1767183100',
            type: 'unsupported',
            errors: [{ code: 131051, title: 'Message type unknown' }],
          },
        ],
      }),
    );
    expect(anomalies).toEqual([]);
    expect(drafts[0]).toMatchObject({ kind: 'status_update', status: 'delivered', userId: 'US.13491208655302741918' });
    expect(drafts[1]).toMatchObject({
      kind: 'inbound_message',
      errorCode: 131051,
      title: 'Inbound unsupported from 447700900123',
    });
  });
});
