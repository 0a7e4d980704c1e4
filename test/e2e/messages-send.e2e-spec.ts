import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/core/crypto/secret-box.js';
import { startStack, type Stack } from '../utils/stack.js';
import { createKey, eventually, helloWorld, onboard, recipient, type OnboardedTenant } from '../utils/factories.js';
import { countMessages, messageRow, openWindow, storeAccessToken } from '../utils/messaging-rows.js';
import { accountRow } from '../utils/db-rows.js';
import { parcelUpdateComponents as parcelComponents, textParameters } from '../utils/template-components.js';

/** A recipient no simulator rule matches: accepted with normal statuses. */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What the simulator received from this tenant's business account. */
const upstreamSends = (stack: Stack, t: OnboardedTenant) =>
  stack.sim.sends().filter((s) => s.wabaId === t.account.wabaId);

const fieldsOf = (body: { errors?: Array<{ field: string }> }) => (body.errors ?? []).map((e) => e.field).sort();

describe('POST /messages (simulator + real API)', () => {
  let stack: Stack;
  let t: OnboardedTenant;
  let other: OnboardedTenant;

  const send = (body: unknown, tenant: OnboardedTenant = t) =>
    stack.http
      .post('/messages')
      .set(tenant.key.headers)
      .send(body as object);

  beforeAll(async () => {
    stack = await startStack();
    [t, other] = await Promise.all([onboard(stack, 'Send Org'), onboard(stack, 'Other Org')]);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  describe('validation: 422 Field Validation Failed, one error per failing field', () => {
    /** Every validation failure must be refused before any upstream call. */
    async function expectInvalid(body: unknown, fields: string[]) {
      const before = upstreamSends(stack, t).length;
      const res = await send(body);
      expect(res.status).toBe(422);
      expect(res.body.statusCode).toBe(422);
      expect(res.body.message).toBe('Field Validation Failed');
      expect(res.body.data).toBeUndefined();
      expect(fieldsOf(res.body)).toEqual([...fields].sort());
      for (const e of res.body.errors) expect(e.message).toEqual(expect.any(String));
      expect(upstreamSends(stack, t).length).toBe(before);
      return res.body.errors as Array<{ field: string; message: string }>;
    }

    it('reports every failing field at once (bad to, missing templateName, bad templateLanguage)', async () => {
      const errors = await expectInvalid(
        { phoneNumberId: t.account.phoneNumberId, to: '+44 7700', type: 'template', templateLanguage: 'english' },
        ['to', 'templateName', 'templateLanguage'],
      );
      expect(errors.find((e) => e.field === 'templateName')!.message).toMatch(/templateName/);
      expect(errors.find((e) => e.field === 'templateLanguage')!.message).toMatch(/templateLanguage/);
    });

    it.each([
      ['empty', ''],
      ['with a plus sign', '+447700900123'],
      ['with spaces', '44 7700 900123'],
      ['with a leading 0', '0447700900123'],
      ['7 digits', '4477009'],
      ['16 digits', '4477009001234567'],
      ['not a string', 447700900123],
    ])('refuses a recipient %s, naming to', async (_label, to) => {
      await expectInvalid(helloWorld(t, 'x', { to }), ['to']);
    });

    it('refuses a missing recipient and a missing phoneNumberId', async () => {
      const { to: _to, phoneNumberId: _p, ...rest } = helloWorld(t, recipient());
      await expectInvalid(rest, ['phoneNumberId', 'to']);
    });

    it('accepts the 8 and 15 digit boundaries and sends them upstream', async () => {
      for (const to of ['12345678', '123456789012345']) {
        const res = await send(helloWorld(t, to));
        expect(res.status).toBe(200);
        expect(res.body.data.to).toBe(to);
        expect(stack.sim.sends({ to }).filter((s) => s.wabaId === t.account.wabaId)).toHaveLength(1);
      }
    });

    it.each([['poll'], ['TEMPLATE'], [undefined]])('refuses type %s, naming type', async (type) => {
      await expectInvalid(helloWorld(t, recipient(), { type }), ['type']);
    });

    it('refuses a text message without text, with an empty body and with a 4097-character body', async () => {
      const base = { phoneNumberId: t.account.phoneNumberId, to: recipient(), type: 'text' };
      await expectInvalid(base, ['text']);
      await expectInvalid({ ...base, text: { body: '' } }, ['text.body']);
      await expectInvalid({ ...base, text: { body: 'x'.repeat(4097) } }, ['text.body']);
    });

    it('refuses an unknown field, naming it', async () => {
      const errors = await expectInvalid(helloWorld(t, recipient(), { priority: 'high' }), ['priority']);
      expect(errors[0]!.message).toBe('priority is not allowed');
    });

    it('names nested component errors by dotted path', async () => {
      await expectInvalid(
        helloWorld(t, recipient(), {
          templateName: 'parcel_update',
          templateLanguage: 'en_GB',
          components: [
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'Priya' },
                { type: 'emoji', text: 'x' },
              ],
            },
            { type: 'footer', parameters: [] },
            { type: 'button', index: '0', parameters: [{ type: 'text', text: 'x' }] },
          ],
        }),
        ['components.0.parameters.1.type', 'components.1.type', 'components.2.sub_type'],
      );
    });

    it('says a component without parameters is missing them', async () => {
      const errors = await expectInvalid(helloWorld(t, recipient(), { components: [{ type: 'body' }] }), [
        'components.0.parameters',
      ]);
      expect(errors[0]!.message).toBe('parameters is required (an empty array for none)');
    });
  });

  describe('pre-send checks: 422 naming the field, no upstream call', () => {
    async function expectRefused(body: Record<string, unknown>, field: string, message?: RegExp) {
      const before = upstreamSends(stack, t).length;
      const stored = await countMessages(stack, { to: body.to as string });
      const res = await send(body);
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Field Validation Failed');
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].field).toBe(field);
      if (message) expect(res.body.errors[0].message).toMatch(message);
      expect(upstreamSends(stack, t).length).toBe(before);
      // Refused before anything is stored: no failed message appears in the list.
      expect(await countMessages(stack, { to: body.to as string })).toBe(stored);
    }

    it('refuses a phone number id that was never synced', async () => {
      await expectRefused(
        helloWorld(t, recipient(), { phoneNumberId: '402999999999999' }),
        'phoneNumberId',
        /not a synced phone number/,
      );
    });

    it("refuses another business account's phone number", async () => {
      await expectRefused(helloWorld(t, recipient(), { phoneNumberId: other.account.phoneNumberId }), 'phoneNumberId');
    });

    it.each([['PENDING'], ['DISCONNECTED']])('refuses a synced number whose status is %s', async (status) => {
      const number = t.account.sim.phoneNumbers.find((p) => p.status === status)!;
      await expectRefused(
        helloWorld(t, recipient(), { phoneNumberId: number.id }),
        'phoneNumberId',
        new RegExp(status),
      );
    });

    it('refuses a template that is not synced', async () => {
      await expectRefused(
        helloWorld(t, recipient(), { templateName: 'no_such_template' }),
        'templateName',
        /not synced/,
      );
    });

    it.each([
      ['summer_sale', 'en_GB', 'PENDING'],
      ['account_alert', 'en_GB', 'REJECTED'],
      ['spring_sale', 'en_US', 'PAUSED'],
    ])('refuses %s (%s), which is %s', async (templateName, templateLanguage, status) => {
      await expectRefused(
        helloWorld(t, recipient(), {
          templateName,
          templateLanguage,
          components: [textParameters(['x'])],
        }),
        'templateName',
        new RegExp(status),
      );
    });

    it('refuses a language the template has no translation in, naming templateLanguage', async () => {
      await expectRefused(
        helloWorld(t, recipient(), {
          templateName: 'parcel_update',
          templateLanguage: 'fr_FR',
          components: parcelComponents(),
        }),
        'templateLanguage',
      );
    });

    it('refuses a parameter count that does not match the synced template, naming components', async () => {
      await expectRefused(
        helloWorld(t, recipient(), {
          templateName: 'parcel_update',
          templateLanguage: 'en_GB',
          components: [textParameters(['Priya'])],
        }),
        'components',
        /body expects 2 parameters, got 1/,
      );
      await expectRefused(helloWorld(t, recipient(), { components: [textParameters(['extra'])] }), 'components');
    });

    it('refuses a NAMED template whose parameters do not carry the placeholder names, naming components', async () => {
      await expectRefused(
        helloWorld(t, recipient(), {
          templateName: 'welcome_named',
          templateLanguage: 'en_GB',
          components: [
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'Priya', parameter_name: 'first_name' },
                { type: 'text', text: 'Parcel Co' },
              ],
            },
          ],
        }),
        'components',
        /company/,
      );
    });

    it('refuses a text message outside the 24 h customer service window, naming to', async () => {
      const to = recipient();
      const text = {
        phoneNumberId: t.account.phoneNumberId,
        to,
        type: 'text',
        text: { body: 'Your parcel is ready.' },
      };
      await expectRefused(text, 'to', /24 h/);
      // A window that closed 25 hours ago is closed.
      await openWindow(stack, t.account, to, new Date(Date.now() - 25 * 3600_000));
      await expectRefused(text, 'to');
    });

    it('sends a text message inside the window, up to 4096 characters', async () => {
      // The inbound message that opens a window is processed by the webhooks worker, which is not wired yet:
      // the window row it would write is inserted directly.
      const to = recipient();
      await openWindow(stack, t.account, to, new Date(Date.now() - 23 * 3600_000));
      const body = 'x'.repeat(4096);
      const res = await send({ phoneNumberId: t.account.phoneNumberId, to, type: 'text', text: { body } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ to, type: 'text', status: 'sent', templateName: null });
      const sends = stack.sim.sends({ to });
      expect(sends).toHaveLength(1);
      expect(sends[0]!.body).toMatchObject({ to: `+${to}`, type: 'text', text: { body } });
    });
  });

  describe('success', () => {
    it('answers 200 Success with the fuller Message form, sends once upstream and stores the wamid', async () => {
      const to = recipient();
      const components = parcelComponents();
      const startedAt = Date.now();
      const res = await send(
        helloWorld(t, to, { templateName: 'parcel_update', templateLanguage: 'en_GB', components }),
      );

      expect(res.status).toBe(200);
      expect(res.body.statusCode).toBe(200);
      expect(res.body.message).toBe('Success');
      expect(res.body.errors).toBeUndefined();
      const data = res.body.data;
      expect(data).toMatchObject({
        phoneNumberId: t.account.phoneNumberId,
        to,
        type: 'template',
        status: 'sent',
        templateName: 'parcel_update',
        error: null,
      });
      expect(Number.isInteger(data.id)).toBe(true);
      expect(data.upstreamMessageId).toMatch(/^wamid\./);
      expect(data.createdAt).toMatch(ISO_MS);
      expect(Date.parse(data.createdAt)).toBeGreaterThanOrEqual(startedAt - 1000);

      const sends = upstreamSends(stack, t).filter((s) => (s.body as { to: string }).to === `+${to}`);
      expect(sends).toHaveLength(1);
      expect(sends[0]!.phoneNumberId).toBe(t.account.phoneNumberId);
      expect(sends[0]!.body).toMatchObject({
        messaging_product: 'whatsapp',
        to: `+${to}`,
        type: 'template',
        template: { name: 'parcel_update', language: { code: 'en_GB' }, components },
      });
      expect((sends[0]!.response.body as { messages: Array<{ id: string }> }).messages[0]!.id).toBe(
        data.upstreamMessageId,
      );

      const row = await messageRow(stack, data.id);
      expect(row).toMatchObject({
        upstreamMessageId: data.upstreamMessageId,
        status: 'sent',
        to,
        templateName: 'parcel_update',
      });
    });

    it('sends a NAMED template and a media header as given', async () => {
      const named = [
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Priya', parameter_name: 'first_name' },
            { type: 'text', text: 'Parcel Co', parameter_name: 'company' },
          ],
        },
      ];
      const photo = [
        { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/p.jpg' } }] },
        textParameters(['ORD-7781']),
      ];
      for (const [templateName, components] of [
        ['welcome_named', named],
        ['delivery_photo', photo],
      ] as const) {
        const to = recipient();
        const res = await send(helloWorld(t, to, { templateName, templateLanguage: 'en_GB', components }));
        expect(res.status).toBe(200);
        expect(res.body.data).toMatchObject({ status: 'sent', templateName });
        const sends = stack.sim.sends({ to });
        expect(sends).toHaveLength(1);
        expect(sends[0]!.response.status).toBe(200);
        expect(sends[0]!.body).toMatchObject({ template: { name: templateName, components } });
      }
    });

    it('accepts a numeric button index and sends it as the string Meta expects', async () => {
      const to = recipient();
      const components = parcelComponents().map((c) => (c.type === 'button' ? { ...c, index: 0 } : c));
      const res = await send(
        helloWorld(t, to, { templateName: 'parcel_update', templateLanguage: 'en_GB', components }),
      );
      expect(res.status).toBe(200);
      const [sent] = stack.sim.sends({ to });
      expect(
        (sent!.body as { template: { components: Array<{ type: string; index?: unknown }> } }).template.components[2]!
          .index,
      ).toBe('0');
    });
  });

  describe('upstream outcomes: a stored failed message with the upstream error', () => {
    async function expectFailed(
      to: string,
      status: number,
      error: Record<string, unknown>,
      message: RegExp,
      tenant: OnboardedTenant = t,
    ) {
      const res = await send(helloWorld(tenant, to), tenant);
      expect(res.status).toBe(status);
      expect(res.body.statusCode).toBe(status);
      expect(res.body.message).toMatch(message);
      expect(res.body.data).toMatchObject({
        to,
        status: 'failed',
        upstreamMessageId: null,
        phoneNumberId: tenant.account.phoneNumberId,
        error,
      });
      expect(Number.isInteger(res.body.data.id)).toBe(true);

      const row = await messageRow(stack, res.body.data.id);
      expect(row).toMatchObject({ status: 'failed', errorCode: error.code, errorTitle: error.title });
      expect(row.failedAt).toBeInstanceOf(Date);

      const got = await stack.http.get(`/messages/${res.body.data.id}`).set(tenant.key.headers);
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({ id: res.body.data.id, status: 'failed', error: res.body.data.error });
      expect(got.body.data.failedAt).toMatch(ISO_MS);
      return res;
    }

    it('answers a permanent rejection (131026) with 422 and the stored failure', async () => {
      await expectFailed(
        '15550000001',
        422,
        {
          code: 131026,
          title: 'Message undeliverable',
          detail: expect.stringContaining('Unable to deliver message'),
          category: 'permanent',
        },
        /Message undeliverable \(131026\)/,
      );
    });

    it('answers a throughput limit (130429) with 429 and Retry-After', async () => {
      const res = await expectFailed(
        '15550000003',
        429,
        { code: 130429, title: 'Rate limit hit', category: 'throughput' },
        /130429/,
      );
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });

    it('answers an expired token (190) with 424 and a reconnect message, and refuses the next sends before any upstream call', async () => {
      // Its own tenant: the rejection marks the account's token rejected (credentialsValid: false).
      const own = await onboard(stack, 'Expired Token Org');
      await expectFailed(
        '15550000008',
        424,
        { code: 190, title: expect.stringContaining('Session has expired'), category: 'credential' },
        /reconnect/,
        own,
      );
      const before = upstreamSends(stack, own).length;
      const next = await send(helloWorld(own, recipient()), own);
      expect(next.status).toBe(424);
      expect(next.body).toEqual({ statusCode: 424, message: expect.stringContaining('Session has expired') });
      expect(upstreamSends(stack, own).length).toBe(before);
    });

    it('answers a restricted account (368) with 424', async () => {
      await expectFailed(
        '15550000009',
        424,
        {
          code: 368,
          title: 'Temporarily blocked for policies violations',
          detail: expect.stringContaining('restricted'),
          category: 'policy',
        },
        /blocked/,
      );
    });

    it('answers an upstream 5xx with 502, and a retry succeeds', async () => {
      await expectFailed(
        '15550000006',
        502,
        { code: 1, title: 'An unknown error has occurred.', category: 'retryable' },
        /unavailable/,
      );
      const retry = await send(helloWorld(t, '15550000006'));
      expect(retry.status).toBe(200);
      expect(retry.body.data).toMatchObject({ status: 'sent', error: null });
      expect(retry.body.data.upstreamMessageId).toMatch(/^wamid\./);
      expect(upstreamSends(stack, t).filter((s) => (s.body as { to: string }).to === '+15550000006')).toHaveLength(2);
    });

    it('follows a replaced upstream token within about a second, instead of a cached old one', async () => {
      const own = await onboard(stack, 'Token Swap Org');
      expect((await send(helloWorld(own, recipient()), own)).status).toBe(200);
      // The token changes behind this process's back (another API process reconnected the account).
      const box = new SecretBox(stack.config.encryptionKeys);
      await storeAccessToken(stack, own.account.wabaId, box.seal('sim-token-revoked', own.account.wabaId));
      const refused = await eventually(
        async () => {
          const res = await send(helloWorld(own, recipient()), own);
          return res.status === 424 ? res : null;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(refused?.body.data.error).toMatchObject({ code: 190, category: 'credential' });

      const replaced = await stack.http
        .put(`/business-accounts/${own.account.wabaId}/access-token`)
        .set('cookie', own.operator.cookie)
        .send({ accessToken: own.account.accessToken });
      expect(replaced.status).toBe(200);
      const accepted = await eventually(
        async () => {
          const res = await send(helloWorld(own, recipient()), own);
          return res.status === 200 ? res : null;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(accepted?.body.data).toMatchObject({ status: 'sent', error: null });
    });
  });

  describe('Idempotency-Key', () => {
    const idem = () => `idem-${randomBytes(8).toString('hex')}`;
    const sendWithKey = (key: string, body: unknown, tenant: OnboardedTenant = t) =>
      stack.http
        .post('/messages')
        .set(tenant.key.headers)
        .set('Idempotency-Key', key)
        .send(body as object);
    const sendsTo = (to: string, tenant: OnboardedTenant = t) =>
      stack.sim.sends({ to }).filter((s) => s.wabaId === tenant.account.wabaId);

    it('replays the first answer exactly for the same key and body, with one upstream send', async () => {
      const key = idem();
      const to = recipient();
      const first = await sendWithKey(key, helloWorld(t, to));
      expect(first.status).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();

      // Same body, keys in another order.
      const { templateLanguage, templateName, ...rest } = helloWorld(t, to);
      const again = await sendWithKey(key, { templateLanguage, templateName, ...rest });
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(sendsTo(to)).toHaveLength(1);
      expect(await countMessages(stack, { to })).toBe(1);
    });

    it('replays a final failure (422 from upstream) without sending again', async () => {
      const key = idem();
      const first = await sendWithKey(key, helloWorld(t, '15550000001'));
      expect(first.status).toBe(422);
      const before = sendsTo('15550000001').length;
      const again = await sendWithKey(key, helloWorld(t, '15550000001'));
      expect(again.status).toBe(422);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(sendsTo('15550000001')).toHaveLength(before);
    });

    it('refuses the same key with a different body, naming Idempotency-Key', async () => {
      const key = idem();
      const to = recipient();
      expect((await sendWithKey(key, helloWorld(t, to))).status).toBe(200);
      const other = recipient();
      const res = await sendWithKey(key, helloWorld(t, other));
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Field Validation Failed');
      expect(res.body.errors).toEqual([
        { field: 'Idempotency-Key', message: expect.stringContaining('different request body') },
      ]);
      expect(sendsTo(other)).toHaveLength(0);
    });

    it('does not keep a validation failure: the same key then works with a good body', async () => {
      const key = idem();
      const to = recipient();
      const bad = await sendWithKey(key, helloWorld(t, to, { templateName: 'no_such_template' }));
      expect(bad.status).toBe(422);
      expect(bad.body.errors[0].field).toBe('templateName');
      const badBody = await sendWithKey(key, helloWorld(t, '+1', {}));
      expect(badBody.status).toBe(422);
      const good = await sendWithKey(key, helloWorld(t, to));
      expect(good.status).toBe(200);
      expect(good.headers['idempotent-replayed']).toBeUndefined();
      expect(sendsTo(to)).toHaveLength(1);
    });

    it.each([
      ['over 255 characters', 'k'.repeat(256)],
      ['with a space', 'has space'],
    ])('refuses a key %s', async (_label, key) => {
      const to = recipient();
      const res = await sendWithKey(key, helloWorld(t, to));
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
      expect(sendsTo(to)).toHaveLength(0);
    });

    it('accepts a key of exactly 255 characters', async () => {
      const res = await sendWithKey(`${idem()}${'k'.repeat(255)}`.slice(0, 255), helloWorld(t, recipient()));
      expect(res.status).toBe(200);
    });

    it('does not keep a 502 or a 429: a retry with the same key sends again', async () => {
      const key = idem();
      const first = await sendWithKey(key, helloWorld(other, '15550000006'), other);
      expect(first.status).toBe(502);
      const retry = await sendWithKey(key, helloWorld(other, '15550000006'), other);
      expect(retry.status).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(sendsTo('15550000006', other)).toHaveLength(2);
      // Now final: replayed.
      const third = await sendWithKey(key, helloWorld(other, '15550000006'), other);
      expect(third.headers['idempotent-replayed']).toBe('true');
      expect(third.body).toEqual(retry.body);
      expect(sendsTo('15550000006', other)).toHaveLength(2);

      const throttledKey = idem();
      const before = sendsTo('15550000003').length;
      expect((await sendWithKey(throttledKey, helloWorld(t, '15550000003'))).status).toBe(429);
      const again = await sendWithKey(throttledKey, helloWorld(t, '15550000003'));
      expect(again.status).toBe(429);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(sendsTo('15550000003')).toHaveLength(before + 2);
    });

    it('scopes keys to the key pair', async () => {
      const key = idem();
      const mine = await sendWithKey(key, helloWorld(t, recipient()));
      expect(mine.status).toBe(200);
      // The same key string on another pair, even with another body, is a fresh request.
      const theirs = await sendWithKey(key, helloWorld(other, recipient()), other);
      expect(theirs.status).toBe(200);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(theirs.body.data.id).not.toBe(mine.body.data.id);

      // A second key pair of the same account, same key string and same body: also a fresh send.
      const to = recipient();
      const first = await sendWithKey(key + '-same-account', helloWorld(t, to));
      const secondPair = await createKey(stack, t.operator, t.account.wabaId, 'second pair');
      const again = await stack.http
        .post('/messages')
        .set(secondPair.headers)
        .set('Idempotency-Key', key + '-same-account')
        .send(helloWorld(t, to));
      expect([first.status, again.status]).toEqual([200, 200]);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(again.body.data.id).not.toBe(first.body.data.id);
      expect(sendsTo(to)).toHaveLength(2);
    });
  });
});

describe('POST /messages when the upstream platform does not answer in time', () => {
  let stack: Stack;
  let t: OnboardedTenant;
  const HANG = '15550000010';

  beforeAll(async () => {
    stack = await startStack({ sim: { hangMs: 2500 }, env: { UPSTREAM_TIMEOUT_MS: '1000' } });
    t = await onboard(stack, 'Timeout Org');
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('answers 502 with the failed attempt, and GET /messages/:id shows the same failure', async () => {
    const res = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, HANG));
    // Had the API waited for the simulator (2.5 s), the send would have been accepted.
    expect(res.status).toBe(502);
    expect(res.body.message).toMatch(/unavailable/);
    expect(res.body.data).toMatchObject({
      to: HANG,
      status: 'failed',
      upstreamMessageId: null,
      error: { code: null, title: 'No answer from the upstream within 1000 ms', category: 'retryable' },
    });
    const got = await stack.http.get(`/messages/${res.body.data.id}`).set(t.key.headers);
    expect(got.body.data).toMatchObject({ status: 'failed', error: res.body.data.error });
  });

  it('answers 409 to a concurrent request with the same Idempotency-Key, and sends once', async () => {
    const key = `concurrent-${randomBytes(6).toString('hex')}`;
    const businessAccountId = await accountId(stack, t);
    const storedBefore = await countMessages(stack, { businessAccountId, to: HANG });
    const post = () =>
      stack.http.post('/messages').set(t.key.headers).set('Idempotency-Key', key).send(helloWorld(t, HANG));
    const both = await Promise.all([post(), new Promise((r) => setTimeout(r, 50)).then(post)]);
    expect(both.map((r) => r.status).sort()).toEqual([409, 502]);
    expect(both.find((r) => r.status === 409)!.body).toEqual({
      statusCode: 409,
      message: expect.stringContaining('still in progress'),
    });
    expect(await countMessages(stack, { businessAccountId, to: HANG })).toBe(storedBefore + 1);
    // The simulator records a hanging send when it finally answers.
    const sends = await eventually(
      async () => {
        const s = stack.sim.sends({ to: HANG }).filter((x) => x.wabaId === t.account.wabaId);
        return s.length >= storedBefore + 1 ? s : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(sends).toHaveLength(storedBefore + 1);
  });
});

async function accountId(stack: Stack, t: OnboardedTenant): Promise<string> {
  return (await accountRow(stack.db, { wabaId: t.account.wabaId })).id;
}
