import { TooManyAttempts } from '../core/errors/domain-errors.js';
import { UpstreamError } from '../upstream/upstream.error.js';
import { upstreamFailure } from '../upstream/upstream-failure.js';
import { pendingRow, type StoredMessage } from './messages.repository.js';
import { sendAnswerOf } from './messages.controller.js';
import { earlierOutcomeOf, recordOf, rejectionOf, type FinalOutcome } from './send/send-outcome.js';

const at = new Date('2026-11-22T10:00:00.000Z');
const pending = pendingRow(
  'ba-1',
  {
    apiKeyId: 'key-1',
    phoneNumberId: '402000000000011',
    to: '447700900123',
    userId: null,
    upstreamApi: 'cloud_api',
    type: 'text',
    templateName: null,
    templateLanguage: null,
    content: { text: { body: 'hi' } },
  },
  { id: 7, createdAt: at, updatedAt: at },
);
const message = (over: Partial<StoredMessage> = {}): StoredMessage => ({
  ...pending,
  status: 'sent',
  upstreamMessageId: 'wamid.OK',
  acceptedAt: at,
  sentAt: at,
  ...over,
});
const failed = message({
  status: 'failed',
  upstreamMessageId: null,
  errorCode: 131026,
  errorTitle: 'Message undeliverable',
  errorDetail: null,
  errorCategory: 'permanent',
});
const view = {
  id: 7,
  direction: 'outbound',
  upstreamMessageId: 'wamid.OK',
  phoneNumberId: '402000000000011',
  to: '447700900123',
  from: null,
  userId: null,
  handledBy: null,
  upstreamApi: 'cloud_api',
  type: 'text',
  status: 'sent',
  templateName: null,
  templateLanguage: null,
  campaignId: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  error: null,
};
const upstream = (code: number, httpStatus: number) =>
  UpstreamError.fromResponse(
    'sendMessage',
    httpStatus,
    { error: { code, message: `(#${code}) Meta says no` } },
    undefined,
    [],
  );

describe('sendAnswerOf (POST /messages: outcome → status, headers, envelope)', () => {
  it('accepted: 200, Success, the message', () => {
    expect(sendAnswerOf({ outcome: 'accepted', message: message() })).toEqual({
      statusCode: 200,
      headers: {},
      body: { statusCode: 200, message: 'Success', data: view },
    });
  });

  it.each([
    [upstreamFailure(upstream(131026, 400)), 422, 'Upstream rejected the message: Meta says no (131026)', {}],
    [upstreamFailure(upstream(190, 401)), 424, expect.stringContaining('reconnect it with a new token') as unknown, {}],
    [
      upstreamFailure(upstream(130429, 429)),
      429,
      expect.stringMatching(/^Upstream rate limit/) as unknown,
      { 'Retry-After': '1' },
    ],
    [
      new TooManyAttempts('Phone number 402000000000011 is at its throughput', 2),
      429,
      'Phone number 402000000000011 is at its throughput',
      { 'Retry-After': '2' },
    ],
  ])(
    'rejected: the mapper’s status for its kind, Retry-After when it has one, the failed message in data (%#)',
    (error, statusCode, said, headers) => {
      const answer = sendAnswerOf({ outcome: 'rejected', message: failed, reason: rejectionOf(error) });
      expect(answer).toEqual({
        statusCode,
        headers,
        body: {
          statusCode,
          message: said,
          data: {
            ...view,
            status: 'failed',
            upstreamMessageId: null,
            error: { code: 131026, title: 'Message undeliverable', detail: null, category: 'permanent' },
          },
        },
      });
    },
  );

  it('a note is said after the reason', () => {
    const answer = sendAnswerOf({
      outcome: 'rejected',
      message: failed,
      reason: rejectionOf(upstreamFailure(upstream(130429, 429)), 'sends are held for 1 s'),
    });
    expect(answer.body.message).toMatch(/; sends are held for 1 s$/);
  });

  it.each<[string, FinalOutcome]>([
    ['accepted', { outcome: 'accepted', message: message() }],
    ['rejected', { outcome: 'rejected', message: failed, reason: rejectionOf(upstreamFailure(upstream(131026, 400))) }],
  ])('replayed (%s) from its record: the first answer byte for byte, plus Idempotent-Replayed', (_name, first) => {
    const original = sendAnswerOf(first);
    const stored = JSON.parse(JSON.stringify(recordOf(first))) as unknown;
    const replay = sendAnswerOf({
      outcome: 'replayed',
      earlier: earlierOutcomeOf({ responseBody: stored }),
    });
    expect(replay.statusCode).toBe(original.statusCode);
    expect(JSON.stringify(replay.body)).toBe(JSON.stringify(original.body));
    expect(replay.headers).toEqual({ 'Idempotent-Replayed': 'true' });
  });
});
