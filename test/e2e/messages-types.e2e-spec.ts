import { startStack, type Stack } from '../utils/stack.js';
import { eventually, onboard, recipient, type Tenant } from '../utils/factories.js';
import { openWindow as openWindowOf } from '../utils/messaging-rows.js';

/** What the simulator received from this tenant's business account. */
const upstreamSends = (stack: Stack, t: Tenant) => stack.sim.sends().filter((s) => s.wabaId === t.account.wabaId);
const fieldsOf = (body: { errors?: Array<{ field: string }> }) => (body.errors ?? []).map((e) => e.field).sort();

const REPLY_TO = 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=';

/** One valid body per type, content in Meta's own shape. */
const CONTENT: Record<string, unknown> = {
  image: { link: 'https://cdn.example.com/p.jpg', caption: 'Your parcel' },
  video: { link: 'https://cdn.example.com/fit.mp4', caption: 'How to fit it' },
  audio: { link: 'https://cdn.example.com/voice.ogg' },
  document: { link: 'https://cdn.example.com/invoice.pdf', caption: 'Invoice', filename: 'invoice-7781.pdf' },
  sticker: { link: 'https://cdn.example.com/s.webp' },
  location: { latitude: 51.5072, longitude: -0.1276, name: 'Depot', address: '1 Example Street, London' },
  contacts: [
    {
      name: { formatted_name: 'Priya Shah', first_name: 'Priya' },
      phones: [{ phone: '+44 7700 900123', type: 'CELL', wa_id: '447700900123' }],
    },
  ],
  interactive: {
    type: 'button',
    header: { type: 'text', text: 'Parcel Co' },
    body: { text: 'Which slot suits you?' },
    footer: { text: 'Reply by 6pm' },
    action: {
      buttons: [
        { type: 'reply', reply: { id: 'am', title: 'Morning' } },
        { type: 'reply', reply: { id: 'pm', title: 'Afternoon' } },
      ],
    },
  },
  reaction: { message_id: REPLY_TO, emoji: '👍' },
};

const LIST = {
  type: 'list',
  body: { text: 'Pick a slot' },
  action: {
    button: 'Slots',
    sections: [
      {
        title: 'Tomorrow',
        rows: [
          { id: 'a', title: 'Morning', description: '8–12' },
          { id: 'b', title: 'Afternoon' },
        ],
      },
    ],
  },
};
const CTA = {
  type: 'cta_url',
  body: { text: 'Track it' },
  action: { name: 'cta_url', parameters: { display_text: 'Track parcel', url: 'https://parcel.example.com/t/1' } },
};

describe('POST /messages: every message type (simulator + real API + worker)', () => {
  let stack: Stack;
  let t: Tenant;

  const send = (body: unknown) =>
    stack.http
      .post('/messages')
      .set(t.key.headers)
      .send(body as object);
  /** A recipient whose 24 h window is open (as an inbound message would leave it). */
  const openWindow = async () => {
    const to = recipient();
    await openWindowOf(stack, t.account, to);
    return to;
  };

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    t = await onboard(stack, 'Types Org');
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  const cases: Array<[string, string, unknown]> = [
    ...Object.entries(CONTENT).map(([type, content]) => [type, type, content] as [string, string, unknown]),
    ['interactive list', 'interactive', LIST],
    ['interactive cta_url', 'interactive', CTA],
  ];

  it.each(cases)(
    '%s: sent in Meta’s shape, stored with its content, statuses arrive',
    async (_label, type, content) => {
      const to = await openWindow();
      const res = await send({
        phoneNumberId: t.account.phoneNumberId,
        to,
        type,
        [type]: content,
        context: { message_id: REPLY_TO },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ to, type, status: 'sent', templateName: null });

      const sends = stack.sim.sends({ to });
      expect(sends).toHaveLength(1);
      expect(sends[0]!.body).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: `+${to}`,
        type,
        [type]: content,
        context: { message_id: REPLY_TO },
        biz_opaque_callback_data: expect.any(String),
      });
      expect(sends[0]!.response.status).toBe(200);

      const id = res.body.data.id as number;
      const detail = await eventually(async () => {
        const r = await stack.http.get(`/messages/${id}`).set(t.key.headers);
        return r.body.data?.status === 'read' ? r : undefined;
      });
      expect(detail?.body.data).toMatchObject({
        type,
        status: 'read',
        content: { [type]: content, context: { message_id: REPLY_TO } },
      });

      const list = await stack.http.get('/messages').query({ type, to }).set(t.key.headers);
      expect(list.body.data.items.map((m: { id: number }) => m.id)).toEqual([id]);
      expect(list.body.data.items[0].content).toEqual({ [type]: content, context: { message_id: REPLY_TO } });
    },
  );

  it('refuses every non-template type outside the 24 h window, naming to, before any upstream call', async () => {
    const before = upstreamSends(stack, t).length;
    for (const [type, content] of Object.entries(CONTENT)) {
      const res = await send({ phoneNumberId: t.account.phoneNumberId, to: recipient(), type, [type]: content });
      expect([type, res.status, fieldsOf(res.body)]).toEqual([type, 422, ['to']]);
    }
    expect(upstreamSends(stack, t).length).toBe(before);
  });

  it('a template with an IMAGE header needs the image header parameter (422 naming the component), before any upstream call', async () => {
    const before = upstreamSends(stack, t).length;
    const body = { type: 'body', parameters: [{ type: 'text', text: 'ORD-7781' }] };
    const base = {
      phoneNumberId: t.account.phoneNumberId,
      to: recipient(),
      type: 'template',
      templateName: 'delivery_photo',
      templateLanguage: 'en_GB',
    };
    for (const components of [
      [body],
      [{ type: 'header', parameters: [{ type: 'text', text: 'x' }] }, body],
      [
        { type: 'header', parameters: [{ type: 'document', document: { link: 'https://cdn.example.com/a.pdf' } }] },
        body,
      ],
    ]) {
      const res = await send({ ...base, components });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([
        { field: 'components', message: expect.stringMatching(/header needs one image parameter.*IMAGE/) },
      ]);
    }
    expect(upstreamSends(stack, t).length).toBe(before);
    const ok = await send({
      ...base,
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/p.jpg' } }] },
        body,
      ],
    });
    expect(ok.status).toBe(200);
  });

  it('analytics filter by type', async () => {
    const res = await stack.http.get('/messages/analytics').query({ type: 'location' }).set(t.key.headers);
    expect(res.status).toBe(200);
    expect(res.body.data.totals.total).toBe(1);
    const bad = await stack.http.get('/messages/analytics').query({ type: 'poll' }).set(t.key.headers);
    expect(bad.status).toBe(422);
    expect(fieldsOf(bad.body)).toEqual(['type']);
  });

  it('documents POST /messages as one schema per type under oneOf, discriminated by type, with an example each', async () => {
    const res = await stack.http.get('/swagger/docs-json');
    const doc = res.body as {
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody: {
              content: Record<
                string,
                {
                  schema: {
                    oneOf: Array<{ $ref: string }>;
                    discriminator: { propertyName: string; mapping: Record<string, string> };
                  };
                  examples: Record<string, { value: { type: string } }>;
                }
              >;
            };
          }
        >
      >;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
    };
    const body = doc.paths['/messages']!.post!.requestBody.content['application/json']!;
    const types = [
      'template',
      'text',
      'image',
      'video',
      'audio',
      'document',
      'sticker',
      'location',
      'contacts',
      'interactive',
      'reaction',
    ];
    expect(body.schema.oneOf).toHaveLength(types.length);
    expect(body.schema.discriminator.propertyName).toBe('type');
    expect(Object.keys(body.schema.discriminator.mapping).sort()).toEqual([...types].sort());
    for (const type of types) {
      const name = body.schema.discriminator.mapping[type]!.split('/').pop()!;
      const schema = doc.components.schemas[name]!;
      expect(schema.properties.type).toMatchObject({ enum: [type] });
      if (type !== 'template') expect(schema.required).toEqual(expect.arrayContaining(['phoneNumberId', 'type', type]));
      // The recipient: exactly one of to (phone number) and userId (business-scoped user id).
      expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['to', 'userId']));
      expect(Object.values(body.examples).some((e) => e.value.type === type)).toBe(true);
    }
    for (const ref of JSON.stringify(doc).match(/#\/components\/schemas\/\w+/g) ?? [])
      expect(doc.components.schemas[ref.split('/').pop()!]).toBeDefined();
  });

  it("accepts Meta's preview_url on text as well as previewUrl", async () => {
    const to = await openWindow();
    const res = await send({
      phoneNumberId: t.account.phoneNumberId,
      to,
      type: 'text',
      text: { body: 'See https://example.com', preview_url: true },
    });
    expect(res.status).toBe(200);
    expect(stack.sim.sends({ to })[0]!.body).toMatchObject({
      text: { body: 'See https://example.com', preview_url: true },
    });
  });

  it('sends an empty emoji to remove a reaction', async () => {
    const to = await openWindow();
    const res = await send({
      phoneNumberId: t.account.phoneNumberId,
      to,
      type: 'reaction',
      reaction: { message_id: REPLY_TO, emoji: '' },
    });
    expect(res.status).toBe(200);
    expect(stack.sim.sends({ to })[0]!.body).toMatchObject({
      type: 'reaction',
      reaction: { message_id: REPLY_TO, emoji: '' },
    });
  });

  describe('validation table: one invalid body per rule, 422 naming the field, nothing sent', () => {
    const image = (extra: object) => ({ type: 'image', image: { link: 'https://cdn.example.com/p.jpg', ...extra } });
    const buttons = (n: number, title = 'Ok') =>
      Array.from({ length: n }, (_, i) => ({ type: 'reply', reply: { id: `b${i}`, title } }));
    const interactive = (action: object, extra: object = {}) => ({
      type: 'interactive',
      interactive: { type: 'button', body: { text: 'Pick' }, action, ...extra },
    });
    const list = (sections: object[], extra: object = {}) => ({
      type: 'interactive',
      interactive: { type: 'list', body: { text: 'Pick' }, action: { button: 'Slots', sections, ...extra } },
    });
    const rows = (n: number, title = 'Row') => Array.from({ length: n }, (_, i) => ({ id: `r${i}`, title }));

    const table: Array<[string, object, string | string[]]> = [
      ['unknown type', { type: 'poll' }, 'type'],
      ['image missing', { type: 'image' }, 'image'],
      ['neither link nor id', { type: 'image', image: { caption: 'x' } }, 'image.link'],
      ['both link and id', image({ id: '123' }), 'image.link'],
      ['http link', { type: 'image', image: { link: 'http://cdn.example.com/p.jpg' } }, 'image.link'],
      ['caption over 1024', image({ caption: 'x'.repeat(1025) }), 'image.caption'],
      [
        'caption on audio',
        { type: 'audio', audio: { link: 'https://cdn.example.com/a.ogg', caption: 'x' } },
        'audio.caption',
      ],
      ['filename on image', image({ filename: 'a.png' }), 'image.filename'],
      ['non-numeric media id', { type: 'video', video: { id: '../x' } }, 'video.id'],
      ['latitude out of range', { type: 'location', location: { latitude: 91, longitude: 0 } }, 'location.latitude'],
      [
        'longitude out of range',
        { type: 'location', location: { latitude: 0, longitude: -181 } },
        'location.longitude',
      ],
      ['contacts empty', { type: 'contacts', contacts: [] }, 'contacts'],
      [
        'contact without formatted_name',
        { type: 'contacts', contacts: [{ name: { first_name: 'P' } }] },
        'contacts.0.name.formatted_name',
      ],
      [
        'interactive type unknown',
        {
          type: 'interactive',
          interactive: { type: 'carousel', body: { text: 'x' }, action: { buttons: buttons(1) } },
        },
        'interactive.type',
      ],
      ['interactive body missing', interactive({ buttons: buttons(1) }, { body: undefined }), 'interactive.body'],
      [
        'interactive body over 1024',
        interactive({ buttons: buttons(1) }, { body: { text: 'x'.repeat(1025) } }),
        'interactive.body.text',
      ],
      [
        'footer over 60',
        interactive({ buttons: buttons(1) }, { footer: { text: 'x'.repeat(61) } }),
        'interactive.footer.text',
      ],
      ['four reply buttons', interactive({ buttons: buttons(4) }), 'interactive.action.buttons.3'],
      ['no reply buttons', interactive({ buttons: [] }), 'interactive.action.buttons'],
      [
        'eleven contacts',
        { type: 'contacts', contacts: Array.from({ length: 11 }, () => ({ name: { formatted_name: 'P' } })) },
        'contacts.10',
      ],
      [
        'button title over 20',
        interactive({ buttons: buttons(1, 'x'.repeat(21)) }),
        'interactive.action.buttons.0.reply.title',
      ],
      ['duplicate button ids', interactive({ buttons: [...buttons(1), ...buttons(1)] }), 'interactive.action.buttons'],
      ['list without button label', list([{ rows: rows(1) }], { button: undefined }), 'interactive.action.button'],
      [
        'eleven sections',
        list(Array.from({ length: 11 }, (_, i) => ({ title: 'S', rows: [{ id: `s${i}`, title: 'Row' }] }))),
        'interactive.action.sections.10',
      ],
      [
        'eleven rows in one section (and in all)',
        list([{ rows: rows(11) }]),
        ['interactive.action.sections', 'interactive.action.sections.0.rows.10'],
      ],
      [
        'eleven rows in all',
        list([
          { title: 'A', rows: rows(6) },
          { title: 'B', rows: rows(5).map((r) => ({ ...r, id: `x${r.id}` })) },
        ]),
        'interactive.action.sections',
      ],
      ['row title over 24', list([{ rows: rows(1, 'x'.repeat(25)) }]), 'interactive.action.sections.0.rows.0.title'],
      [
        'duplicate row ids',
        list([
          { title: 'A', rows: rows(1) },
          { title: 'B', rows: rows(1) },
        ]),
        'interactive.action.sections',
      ],
      [
        'cta_url http url',
        {
          type: 'interactive',
          interactive: {
            type: 'cta_url',
            body: { text: 'x' },
            action: { name: 'cta_url', parameters: { display_text: 'Go', url: 'http://x.example.com' } },
          },
        },
        'interactive.action.parameters.url',
      ],
      ['not an emoji', { type: 'reaction', reaction: { message_id: REPLY_TO, emoji: 'ok' } }, 'reaction.emoji'],
      ['reaction without message_id', { type: 'reaction', reaction: { emoji: '👍' } }, 'reaction.message_id'],
      ['context without message_id', { type: 'text', text: { body: 'hi' }, context: {} }, 'context.message_id'],
      ['text body over 4096', { type: 'text', text: { body: 'x'.repeat(4097) } }, 'text.body'],
    ];

    it.each(table)('%s → %s', async (_label, body, field) => {
      const to = recipient();
      const before = upstreamSends(stack, t).length;
      const res = await send({ phoneNumberId: t.account.phoneNumberId, to, ...body });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Field Validation Failed');
      expect(fieldsOf(res.body)).toEqual([field].flat().sort());
      expect(upstreamSends(stack, t).length).toBe(before);
    });

    it('reports every failing field at once', async () => {
      const res = await send({
        phoneNumberId: t.account.phoneNumberId,
        to: '+1',
        type: 'interactive',
        interactive: {
          type: 'button',
          body: { text: '' },
          action: { buttons: [...buttons(1), ...buttons(3, 'x'.repeat(21))] },
        },
      });
      expect(res.status).toBe(422);
      expect(fieldsOf(res.body)).toEqual(
        [
          'to',
          'interactive.body.text',
          'interactive.action.buttons.3',
          'interactive.action.buttons.1.reply.title',
          'interactive.action.buttons.2.reply.title',
          'interactive.action.buttons.3.reply.title',
        ].sort(),
      );
    });
  });
});
