import { jest } from '@jest/globals';
import { startStack, type Stack } from '../utils/stack.js';
import { eventually, onboard, recipient, simControl, simInbound, type Tenant } from '../utils/factories.js';
import { openWindow } from '../utils/messaging-rows.js';

jest.setTimeout(120_000);

const FLOW = {
  type: 'flow',
  header: { type: 'text', text: 'Delivery slot' },
  body: { text: 'Pick the slot that suits you.' },
  action: {
    name: 'flow',
    parameters: {
      flow_message_version: '3',
      flow_token: 'ORD-7781',
      flow_id: '1188000000000001',
      flow_cta: 'Choose a slot',
      flow_action: 'navigate',
      flow_action_payload: { screen: 'DELIVERY_SLOT', data: { order_id: 'ORD-7781' } },
    },
  },
};
const LOCATION_REQUEST = {
  type: 'location_request_message',
  body: { text: 'Where should we deliver?' },
  action: { name: 'send_location' },
};

interface Item {
  id: number;
  direction: string;
  type: string;
  upstreamMessageId: string;
  content: Record<string, unknown>;
}

describe('POST /messages: WhatsApp Flows and location requests, and their answers (simulator + API + worker)', () => {
  let stack: Stack;
  let t: Tenant;
  const send = (to: string, interactive: unknown) =>
    stack.http
      .post('/messages')
      .set(t.key.headers)
      .send({ phoneNumberId: t.account.phoneNumberId, to, type: 'interactive', interactive });
  const customer = async () => {
    const to = recipient();
    await openWindow(stack, t.account, to);
    return to;
  };
  /** The inbound message with this wamid, once the worker has stored it. */
  const inbound = (wamid: string) =>
    eventually(async () => {
      const res = await stack.http.get('/messages').query({ direction: 'inbound', limit: 100 }).set(t.key.headers);
      return (res.body.data.items as Item[]).find((i) => i.upstreamMessageId === wamid);
    });

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    t = await onboard(stack, 'Flows Org');
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('sends a flow in Meta’s shape; the user’s nfm_reply is stored with response_json parsed, linked by context', async () => {
    const to = await customer();
    const res = await send(to, FLOW);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ to, type: 'interactive', status: 'sent' });
    const [upstream] = stack.sim.sends({ to });
    expect(upstream?.body).toMatchObject({ to: `+${to}`, type: 'interactive', interactive: FLOW });
    expect(upstream?.response.status).toBe(200);
    const flowWamid = res.body.data.upstreamMessageId as string;

    const reply = (await simControl(stack, 'flow-reply', {
      wabaId: t.account.wabaId,
      phoneNumberId: t.account.phoneNumberId,
      wamid: flowWamid,
      response: { slot: 'am', notes: 'Leave it at the door' },
    })) as { wamid: string };
    const answer = await inbound(reply.wamid);
    expect(answer).toMatchObject({ direction: 'inbound', type: 'interactive' });
    const interactive = answer?.content.interactive as { nfm_reply: { response_json: string } };
    expect(answer?.content).toEqual({
      interactive: {
        type: 'nfm_reply',
        nfm_reply: {
          name: 'flow',
          body: 'Sent',
          response_json: interactive.nfm_reply.response_json,
          response: { slot: 'am', notes: 'Leave it at the door', flow_token: 'ORD-7781' },
        },
      },
      context: { message_id: flowWamid },
    });
    // The answer names the flow message, which GET /messages/:id reads back.
    const flowMessage = await stack.http.get(`/messages/${res.body.data.id}`).set(t.key.headers);
    expect(flowMessage.body.data).toMatchObject({ upstreamMessageId: flowWamid, content: { interactive: FLOW } });
  });

  it('refuses a flow without flow_cta (or a longer one, both flow_id and flow_name, version 2) with 422 naming the field, before Meta', async () => {
    const to = await customer();
    const params = FLOW.action.parameters;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...params, flow_cta: undefined }, 'interactive.action.parameters.flow_cta'],
      [{ ...params, flow_cta: 'x'.repeat(31) }, 'interactive.action.parameters.flow_cta'],
      [{ ...params, flow_name: 'delivery_slot' }, 'interactive.action.parameters.flow_id'],
      [{ ...params, flow_id: undefined }, 'interactive.action.parameters.flow_id'],
      [{ ...params, flow_message_version: '2' }, 'interactive.action.parameters.flow_message_version'],
    ];
    for (const [parameters, field] of cases) {
      const res = await send(to, { ...FLOW, action: { name: 'flow', parameters } });
      expect([res.status, res.body.errors]).toEqual([422, [{ field, message: expect.any(String) }]]);
    }
    const byName = await send(to, {
      ...FLOW,
      action: { name: 'flow', parameters: { ...params, flow_id: undefined, flow_name: 'delivery_slot' } },
    });
    expect(byName.status).toBe(200);
    expect(stack.sim.sends({ to })).toHaveLength(1);
  });

  it('sends a location request; the customer’s location answers it', async () => {
    const to = await customer();
    const res = await send(to, LOCATION_REQUEST);
    expect(res.status).toBe(200);
    expect(stack.sim.sends({ to })[0]?.body).toMatchObject({ type: 'interactive', interactive: LOCATION_REQUEST });
    const wamid = res.body.data.upstreamMessageId as string;
    const location = { latitude: 51.5072, longitude: -0.1276, name: 'Home' };
    const answer = await simInbound(stack, t, {
      from: to,
      type: 'location',
      location,
      context: { from: to, id: wamid },
    });
    expect((await inbound(answer.wamid))?.content).toEqual({ location, context: { message_id: wamid } });
  });

  it('answers an unknown interactive type with 422 naming interactive.type', async () => {
    const res = await send(await customer(), { ...LOCATION_REQUEST, type: 'carousel' });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('interactive.type');
  });
});
