import type { SimContext } from './context.js';

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A user's answer to a flow message the simulator accepted (`POST /_sim/flow-reply` `{wabaId, phoneNumberId, wamid,
 * response?, body?}`), as the inbound message body `/_sim/inbound` takes: Meta's `interactive` of type `nfm_reply`,
 * `{name: "flow", body, response_json}`, where `response_json` is a JSON string of the answers plus the send's
 * `flow_token`, and `context.id` the flow message's wamid; or why not (no such flow message: 404).
 */
export function flowReplyOf(
  ctx: SimContext,
  body: Body,
  display: string,
): { inbound: Body } | { refused: string; status: number } {
  const wamid = body.wamid;
  if (typeof wamid !== 'string' || wamid === '')
    return { refused: 'wamid (the flow message) is required', status: 400 };
  if (body.response !== undefined && !isObject(body.response))
    return { refused: 'response must be an object (the answers)', status: 400 };
  const send = ctx.store
    .sends()
    .find((s) => s.response.status === 200 && messageIdOf(s.response.body) === wamid && s.wabaId === body.wabaId);
  const sent = send?.body as Body | undefined;
  const interactive = sent?.interactive;
  if (!sent || !isObject(interactive) || interactive.type !== 'flow')
    return { refused: `no flow message ${wamid} was sent from this business account`, status: 404 };
  const parameters = isObject(interactive.action) ? interactive.action.parameters : undefined;
  const flowToken =
    isObject(parameters) && typeof parameters.flow_token === 'string' ? parameters.flow_token : undefined;
  const answers = {
    ...body.response,
    ...(flowToken !== undefined ? { flow_token: flowToken } : {}),
  };
  const to = typeof sent.to === 'string' ? sent.to.replace(/\D/g, '') : undefined;
  const userId = to === undefined && typeof sent.recipient === 'string' ? sent.recipient : undefined;
  return {
    inbound: {
      wabaId: body.wabaId,
      phoneNumberId: body.phoneNumberId,
      ...(to !== undefined ? { from: to } : {}),
      ...(userId !== undefined ? { userId } : {}),
      type: 'interactive',
      interactive: {
        type: 'nfm_reply',
        nfm_reply: {
          name: 'flow',
          body: typeof body.body === 'string' ? body.body : 'Sent',
          response_json: JSON.stringify(answers),
        },
      },
      context: { from: display.replace(/\D/g, ''), id: wamid },
    },
  };
}

function messageIdOf(response: unknown): string | undefined {
  const messages = isObject(response) ? response.messages : undefined;
  const first: unknown = Array.isArray(messages) ? messages[0] : undefined;
  return isObject(first) && typeof first.id === 'string' ? first.id : undefined;
}
