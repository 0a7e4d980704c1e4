import type { Response } from 'express';
import { envelope, SUCCESS, type Envelope } from '../core/http/envelope.js';
import { httpAnswerOfKind } from '../core/http/error-mapper.js';
import { toMessageView, type MessageView } from './message.view.js';
import type { EarlierOutcome, SendOutcome } from './send/send-outcome.js';

/** POST /messages' answer: status, headers and envelope. */
export interface SendAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: Envelope<MessageView>;
}

/**
 * The edge of the send use case: what a send came to, as HTTP. Accepted: 200 with the stored message. Rejected:
 * the status the one error mapper gives its kind (Retry-After when there is a time to come back), the stored
 * `failed` message in `data`. Replayed: the first request's answer again, with `Idempotent-Replayed: true`.
 */
export function sendAnswerOf(outcome: SendOutcome): SendAnswer {
  if (outcome.outcome !== 'replayed') return answerOf(outcome);
  const { statusCode, body } = answerOf(outcome.earlier);
  return { statusCode, headers: { 'Idempotent-Replayed': 'true' }, body };
}

function answerOf(outcome: EarlierOutcome): SendAnswer {
  switch (outcome.outcome) {
    case 'accepted':
      return { statusCode: 200, headers: {}, body: envelope(200, SUCCESS, { data: toMessageView(outcome.message) }) };
    case 'rejected': {
      const answer = httpAnswerOfKind(outcome.reason);
      return {
        statusCode: answer.statusCode,
        headers: answer.headers,
        body: envelope(answer.statusCode, answer.message, { data: toMessageView(outcome.message) }),
      };
    }
    case 'legacy_answer':
      return { statusCode: outcome.statusCode, headers: {}, body: outcome.body as Envelope<MessageView> };
  }
}

/** Writes the answer (the send route answers for itself: its status is not always 200, and it sets headers). */
export function presentSend(res: Response, outcome: SendOutcome): void {
  const answer = sendAnswerOf(outcome);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.status(answer.statusCode).json(answer.body);
}
