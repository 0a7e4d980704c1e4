import {
  Conflict,
  Forbidden,
  InvalidInput,
  Malformed,
  NotFound,
  TemporarilyUnavailable,
  TooManyAttempts,
  Unauthenticated,
} from '../errors/domain-errors.js';
import { httpAnswerOf } from './error-mapper.js';

describe('httpAnswerOf', () => {
  it('answers domain errors with their status, fields and Retry-After', () => {
    expect(httpAnswerOf(new NotFound('Business account not found'))).toEqual({
      statusCode: 404,
      message: 'Business account not found',
      errors: undefined,
      headers: {},
    });
    expect(
      httpAnswerOf(new Conflict('taken', [{ field: 'wabaId', message: 'wabaId is already connected' }])),
    ).toMatchObject({ statusCode: 409, errors: [{ field: 'wabaId' }] });
    expect(httpAnswerOf(InvalidInput.of('accessToken', 'rejected'))).toMatchObject({
      statusCode: 422,
      message: 'Field Validation Failed',
      errors: [{ field: 'accessToken', message: 'rejected' }],
    });
    expect(httpAnswerOf(new TooManyAttempts('slow down', 30))).toMatchObject({
      statusCode: 429,
      headers: { 'Retry-After': '30' },
    });
  });

  it("answers the webhook receiver's refusals as it answered them before they were domain errors", () => {
    const bare = (statusCode: number, message: string) => ({ statusCode, message, errors: undefined, headers: {} });
    expect(httpAnswerOf(new Malformed('Malformed JSON body'))).toEqual(bare(400, 'Malformed JSON body'));
    expect(httpAnswerOf(new Unauthenticated('Invalid or missing X-Hub-Signature-256'))).toEqual(
      bare(401, 'Invalid or missing X-Hub-Signature-256'),
    );
    expect(httpAnswerOf(new Forbidden('Webhook verification failed'))).toEqual(
      bare(403, 'Webhook verification failed'),
    );
    // No time to name: no Retry-After (the login throttle names one).
    expect(httpAnswerOf(new TemporarilyUnavailable('Service Unavailable: retry later'))).toEqual(
      bare(503, 'Service Unavailable: retry later'),
    );
    expect(httpAnswerOf(new TemporarilyUnavailable('Redis is down', 5))).toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '5' },
    });
  });

  it('leaves anything else to the filter (a deliberate HTTP error, or a 500)', () => {
    expect(httpAnswerOf(new Error('boom'))).toBeUndefined();
    expect(httpAnswerOf('not even an error')).toBeUndefined();
  });
});
