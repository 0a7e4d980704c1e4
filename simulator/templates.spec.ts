import { CONTENT_CHECKS } from './content-checks.js';
import { checkDefinition } from './templates.js';

const body = { type: 'BODY', text: 'Hi {{1}}, order {{2}}.', example: { body_text: [['Priya', 'ORD-7781']] } };
const valid = { name: 'order_ready', language: 'en_GB', category: 'UTILITY', components: [body] };
const userMessage = (error: ReturnType<typeof checkDefinition>) =>
  (error?.body.error as { error_user_msg?: string; error_subcode?: number } | undefined) ?? {};

describe("the simulator's template checks (Meta's, in Meta's words)", () => {
  it('accepts a valid definition', () => {
    expect(checkDefinition(valid)).toBeUndefined();
  });

  it.each([
    [{ ...valid, name: 'Order Ready' }, /lowercase letters, digits and underscores/],
    [{ ...valid, category: 'PROMO' }, /category must be one of/],
    [{ ...valid, components: [{ type: 'FOOTER', text: 'x' }] }, /needs a BODY/],
    [{ ...valid, components: [{ ...body, example: { body_text: [['Priya']] } }] }, /2 variables and 1 sample/],
  ])('refuses %j with code 100 and Meta’s user message', (definition, message) => {
    const error = checkDefinition(definition);
    expect(error?.httpStatus).toBe(400);
    expect(error?.body.error.code).toBe(100);
    expect(userMessage(error).error_user_msg).toMatch(message);
  });
});

describe("the simulator's flow and location request checks", () => {
  const interactive = (type: string, action: object, extra: object = {}) => ({
    type,
    body: { text: 'Pick a slot' },
    action,
    ...extra,
  });
  const flow = (parameters: object) =>
    interactive('flow', {
      name: 'flow',
      parameters: { flow_message_version: '3', flow_id: '1188000000000001', flow_cta: 'Choose', ...parameters },
    });
  const check = (value: unknown) => CONTENT_CHECKS.interactive!(value, () => true)?.body.error;

  it('accepts a flow by id or by name and a location request', () => {
    expect(check(flow({}))).toBeUndefined();
    expect(check(flow({ flow_id: undefined, flow_name: 'delivery_slot' }))).toBeUndefined();
    expect(check(interactive('location_request_message', { name: 'send_location' }))).toBeUndefined();
  });

  it.each([
    [flow({ flow_cta: 'x'.repeat(31) }), /flow_cta/],
    [flow({ flow_cta: undefined }), /flow_cta/],
    [flow({ flow_name: 'delivery_slot' }), /Exactly one of/],
    [flow({ flow_message_version: '2' }), /flow_message_version/],
    [interactive('location_request_message', { name: 'send_location' }, { footer: { text: 'x' } }), /body only/],
  ])('refuses %j', (value, message) => {
    const error = check(value) as { error_data?: { details?: string } } | undefined;
    expect(error?.error_data?.details).toMatch(message);
  });
});
