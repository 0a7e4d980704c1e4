import { Conflict, InvalidInput, NotFound, TooManyAttempts } from '../errors/domain-errors.js';
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

  it('leaves anything else to the filter (a deliberate HTTP error, or a 500)', () => {
    expect(httpAnswerOf(new Error('boom'))).toBeUndefined();
    expect(httpAnswerOf('not even an error')).toBeUndefined();
  });
});
