import { jest } from '@jest/globals';
import { startStack, type Stack } from '../utils/stack.js';
import { bodyDefinition, textParameters } from '../utils/template-components.js';
import {
  eventually,
  joinOrganization,
  onboard,
  recipient,
  signupAndLogin,
  type OnboardedTenant,
} from '../utils/factories.js';

jest.setTimeout(120_000);

interface TemplateItem {
  id: string;
  upstreamId: string;
  name: string;
  language: string;
  status: string;
  category: string;
  sendable: boolean;
  removed: boolean;
  components: unknown[];
}

const uniqueName = (prefix = 'order_ready') => `${prefix}_${Math.random().toString(36).slice(2, 8)}`;
const components = (text = 'Hi {{1}}, your order {{2}} is ready.', examples = ['Priya', 'ORD-7781']) => [
  bodyDefinition(text, examples),
  { type: 'FOOTER', text: 'Parcel Co' },
];

describe('Templates through the API: create, edit, delete at Meta (simulator + API + worker)', () => {
  let stack: Stack;
  let t: OnboardedTenant;
  const path = (suffix = '') => `/business-accounts/${t.account.wabaId}/templates${suffix}`;
  const create = (body: object, cookie = t.operator.cookie) => stack.http.post(path()).set('cookie', cookie).send(body);
  /** What Meta (the simulator) lists for the account. */
  const atMeta = async () => {
    const res = await fetch(`${stack.sim.baseUrl}/${t.account.wabaId}/message_templates?limit=100`, {
      headers: { authorization: `Bearer ${t.account.accessToken}` },
    });
    return ((await res.json()) as { data: Array<{ id: string; name: string; status: string }> }).data;
  };
  const listed = async (name: string) => {
    const res = await stack.http.get(path()).query({ name }).set('cookie', t.operator.cookie);
    return res.body.data.items as TemplateItem[];
  };
  const statusOf = (name: string, status: string) =>
    eventually(async () => (await listed(name)).find((i) => i.status === status), { timeoutMs: 20_000 });
  const sendTemplate = (name: string, to = recipient()) =>
    stack.http
      .post('/messages')
      .set(t.key.headers)
      .send({
        phoneNumberId: t.account.phoneNumberId,
        to,
        type: 'template',
        templateName: name,
        templateLanguage: 'en_GB',
        components: [textParameters(['Priya', 'ORD-7781'])],
      });
  const auditActions = async () =>
    (
      (await stack.http.get('/audit-log').query({ limit: 100 }).set('cookie', t.operator.cookie)).body.data
        .items as Array<{
        action: string;
        targetId: string;
      }>
    ).map((e) => `${e.action} ${e.targetId}`);

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    t = await onboard(stack, 'Templates Org');
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('creates a template (201, PENDING, not sendable), approved by Meta’s review webhook, then sent', async () => {
    const name = uniqueName();
    const res = await create({ name, language: 'en_GB', category: 'UTILITY', components: components() });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name,
      language: 'en_GB',
      category: 'UTILITY',
      status: 'PENDING',
      sendable: false,
      removed: false,
      parameterFormat: 'POSITIONAL',
      parameterCounts: { body: 2 },
      components: components(),
    });
    const atMetaNow = (await atMeta()).find((m) => m.name === name);
    expect(atMetaNow?.id).toBe(res.body.data.upstreamId);
    expect(await auditActions()).toContain(`template.created ${res.body.data.id}`);

    const approved = await statusOf(name, 'APPROVED');
    expect(approved).toMatchObject({ id: res.body.data.id, sendable: true });
    const to = recipient();
    const sent = await sendTemplate(name, to);
    expect(sent.status).toBe(200);
    expect(stack.sim.sends({ to })[0]?.response.status).toBe(200);
  });

  it('keeps a template in review (PENDING) and a rejected one (REJECTED) from being sent, before Meta', async () => {
    const pending = uniqueName('pending_order');
    expect(
      (await create({ name: pending, language: 'en_GB', category: 'UTILITY', components: components() })).status,
    ).toBe(201);
    const rejected = uniqueName('rejected_order');
    expect(
      (await create({ name: rejected, language: 'en_GB', category: 'UTILITY', components: components() })).status,
    ).toBe(201);
    await statusOf(rejected, 'REJECTED');
    const before = stack.sim.sends().length;
    for (const [name, status] of [
      [pending, 'PENDING'],
      [rejected, 'REJECTED'],
    ]) {
      const res = await sendTemplate(name!);
      expect([res.status, res.body.errors]).toEqual([
        422,
        [{ field: 'templateName', message: expect.stringContaining(status!) }],
      ]);
    }
    expect(stack.sim.sends().length).toBe(before);
  });

  it('refuses what Meta would refuse with 422 naming the field, before Meta (nothing created there)', async () => {
    const before = (await atMeta()).length;
    const cases: Array<[object, string]> = [
      [{ name: 'Order Ready', language: 'en_GB', category: 'UTILITY', components: components() }, 'name'],
      [{ name: uniqueName(), language: 'english', category: 'UTILITY', components: components() }, 'language'],
      [{ name: uniqueName(), language: 'en_GB', category: 'PROMO', components: components() }, 'category'],
      [
        { name: uniqueName(), language: 'en_GB', category: 'UTILITY', components: [{ type: 'FOOTER', text: 'x' }] },
        'components',
      ],
      [
        {
          name: uniqueName(),
          language: 'en_GB',
          category: 'UTILITY',
          components: components('Hi {{1}}, order {{2}} ships on {{3}}.', ['Priya', 'ORD-7781']),
        },
        'components.0.example.body_text',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect([res.status, res.body.message, res.body.errors?.map((e: { field: string }) => e.field)]).toEqual([
        422,
        'Field Validation Failed',
        [field],
      ]);
    }
    expect((await atMeta()).length).toBe(before);
  });

  it('answers an existing name and language with 409, as Meta refuses it', async () => {
    const res = await create({
      name: 'parcel_update',
      language: 'en_GB',
      category: 'UTILITY',
      components: components(),
    });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/parcel_update \(en_GB\) exists already/);
  });

  it('edits a template at Meta: PENDING again, approved again by the webhook; an edit in review is Meta’s 422', async () => {
    const name = uniqueName();
    const created = await create({ name, language: 'en_GB', category: 'UTILITY', components: components() });
    await statusOf(name, 'APPROVED');
    const edited = components('Hello {{1}}, order {{2}} can be collected today.');
    const res = await stack.http
      .patch(path(`/${created.body.data.id}`))
      .set('cookie', t.operator.cookie)
      .send({ components: edited });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'PENDING', sendable: false, components: edited });
    expect(await auditActions()).toContain(`template.edited ${created.body.data.id}`);
    const again = await statusOf(name, 'APPROVED');
    expect(again?.components).toEqual(edited);

    const pending = uniqueName('pending_edit');
    const held = await create({ name: pending, language: 'en_GB', category: 'UTILITY', components: components() });
    const refused = await stack.http
      .patch(path(`/${held.body.data.id}`))
      .set('cookie', t.operator.cookie)
      .send({ category: 'MARKETING' });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/cannot be edited while it is in review/);
    const bad = await stack.http
      .patch(path(`/${created.body.data.id}`))
      .set('cookie', t.operator.cookie)
      .send({ components: components('Hi {{1}} and {{2}}', ['Priya']) });
    expect([bad.status, bad.body.errors?.[0]?.field]).toEqual([422, 'components.0.example.body_text']);
  });

  it('deletes a template at Meta (by name and hsm_id): removed here, gone there, refused for sending', async () => {
    const name = uniqueName();
    const created = await create({ name, language: 'en_GB', category: 'UTILITY', components: components() });
    await statusOf(name, 'APPROVED');
    const res = await stack.http.delete(path(`/${created.body.data.id}`)).set('cookie', t.operator.cookie);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: created.body.data.id, removed: true, sendable: false });
    expect((await atMeta()).some((m) => m.name === name)).toBe(false);
    expect(await auditActions()).toContain(`template.deleted ${created.body.data.id}`);
    const send = await sendTemplate(name);
    expect([send.status, send.body.errors?.[0]?.field]).toEqual([422, 'templateName']);
    const again = await stack.http.delete(path(`/${created.body.data.id}`)).set('cookie', t.operator.cookie);
    expect(again.status).toBe(404);
  });

  it('is for admins and above of the account’s organization: a member gets 403, another organization 404', async () => {
    const body = { name: uniqueName(), language: 'en_GB', category: 'UTILITY', components: components() };
    const member = await joinOrganization(stack, t.operator, 'member');
    expect((await create(body, member.cookie)).status).toBe(403);
    const admin = await joinOrganization(stack, t.operator, 'admin');
    expect((await create(body, admin.cookie)).status).toBe(201);
    const other = await signupAndLogin(stack, 'Other Org');
    expect((await create({ ...body, name: uniqueName() }, other.cookie)).status).toBe(404);
    const [template] = await listed(body.name);
    const patch = await stack.http
      .patch(path(`/${template!.id}`))
      .set('cookie', other.cookie)
      .send({ category: 'MARKETING' });
    expect(patch.status).toBe(404);
    expect((await stack.http.delete(path(`/${template!.id}`)).set('cookie', other.cookie)).status).toBe(404);
  });
});
