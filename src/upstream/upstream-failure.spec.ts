import { httpAnswerOf, httpAnswerOfKind } from '../core/http/error-mapper.js';
import { upstreamFailure, SYNC_FAILURE } from './upstream-failure.js';
import { UpstreamError } from './upstream.error.js';

const upstream = (
  code: number | undefined,
  httpStatus: number,
  extra: { retryAfterSeconds?: number; isTimeout?: boolean } = {},
) =>
  UpstreamError.fromResponse(
    'sendMessage',
    httpStatus,
    code === undefined ? {} : { error: { code, message: `(#${code}) Meta says no` } },
    extra.retryAfterSeconds === undefined ? undefined : String(extra.retryAfterSeconds),
    [],
  );

describe('upstream failures as HTTP answers', () => {
  it('answers an untranslated upstream error by its class', () => {
    expect(httpAnswerOf(upstream(190, 401))?.statusCode).toBe(424);
    expect(httpAnswerOf(upstream(undefined, 503))?.message).toMatch(/^Upstream platform unavailable/);
  });

  it('answers a sync whose listing the upstream refused as unavailable, not as the operator’s mistake', () => {
    expect(httpAnswerOf(upstreamFailure(upstream(100, 400), SYNC_FAILURE))?.statusCode).toBe(502);
    expect(httpAnswerOf(upstreamFailure(upstream(100, 400)))?.statusCode).toBe(422);
  });

  it('puts what was being done before the upstream reason, whatever the class', () => {
    const during = { ...SYNC_FAILURE, during: 'webhook subscription' };
    expect(httpAnswerOf(upstreamFailure(upstream(200, 403), during))).toMatchObject({
      statusCode: 424,
      message: expect.stringContaining('(webhook subscription: Meta says no (200))'),
    });
    expect(httpAnswerOf(upstreamFailure(upstream(2, 503), during))?.message).toBe(
      'Upstream platform unavailable: webhook subscription: Meta says no (2)',
    );
    expect(httpAnswerOf(upstreamFailure(upstream(80007, 400), during))).toMatchObject({
      statusCode: 429,
      message: 'Upstream rate limit: webhook subscription: Meta says no (80007)',
    });
  });
});

describe('httpAnswerOfKind (how a rejected send is answered: an upstream rejection by its kind)', () => {
  const answerTo = (error: UpstreamError) =>
    httpAnswerOfKind(upstreamFailure(error, { outcomeUnknownNote: 'the outcome is unknown' }));

  it.each([
    [190, 401, 424, /reconnect/],
    [368, 400, 424, /blocked/],
    [131026, 400, 422, /^Upstream rejected the message: Meta says no \(131026\)$/],
    [1, 500, 502, /^Upstream platform unavailable/],
    [130429, 429, 429, /^Upstream rate limit/],
  ] as const)('code %s (HTTP %s) → %s', (code, httpStatus, statusCode, message) => {
    const answer = answerTo(upstream(code, httpStatus));
    expect(answer.statusCode).toBe(statusCode);
    expect(answer.message).toMatch(message);
  });

  it('waits as the upstream says, else as the catalogue says', () => {
    expect(answerTo(upstream(130429, 429, { retryAfterSeconds: 7 })).headers).toEqual({ 'Retry-After': '7' });
    expect(answerTo(upstream(131056, 400)).headers).toEqual({ 'Retry-After': '60' });
    expect(answerTo(upstream(80007, 400)).headers).toEqual({ 'Retry-After': '1' });
    expect(answerTo(upstream(1, 500)).headers).toEqual({});
  });

  it('says a timed-out send’s outcome is unknown', () => {
    const timeout = UpstreamError.fromTransport('sendMessage', { code: 'ECONNABORTED' }, 2000);
    expect(answerTo(timeout)).toMatchObject({
      statusCode: 502,
      message: expect.stringContaining('the outcome is unknown'),
    });
  });
});
