import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { flattenValidationErrors } from '../../core/contract/validation.js';
import { SendMessageDto } from './send-message.dto.js';

/** The 422 `errors` a body would get (the global pipe: whitelist, forbidNonWhitelisted). */
async function errorsOf(body: Record<string, unknown>) {
  const dto = plainToInstance(SendMessageDto, {
    phoneNumberId: '402000000000011',
    type: 'template',
    templateName: 'hello_world',
    templateLanguage: 'en_US',
    ...body,
  });
  return flattenValidationErrors(await validate(dto, { whitelist: true, forbidNonWhitelisted: true }));
}

describe('SendMessageDto: the recipient (to or userId)', () => {
  it('takes a phone number or a business-scoped user id, plain or parent form', async () => {
    expect(await errorsOf({ to: '447700900123' })).toEqual([]);
    expect(await errorsOf({ userId: 'US.13491208655302741918' })).toEqual([]);
    expect(await errorsOf({ userId: 'BR.ENT.1502576394655843' })).toEqual([]);
    expect(await errorsOf({ userId: `DE.${'a1'.repeat(64)}` })).toEqual([]);
  });

  it('names to when neither is given, userId when both are, and each malformed one', async () => {
    expect(await errorsOf({})).toEqual([{ field: 'to', message: 'to (or userId) is required' }]);
    expect(await errorsOf({ to: '447700900123', userId: 'US.13491208655302741918' })).toEqual([
      { field: 'userId', message: 'give either to or userId, not both' },
    ]);
    for (const userId of [
      '13491208655302741918',
      'us.1349',
      'USA.1349',
      'US.',
      'US.ENT.',
      `US.${'1'.repeat(129)}`,
      'US.12-34',
    ]) {
      expect(await errorsOf({ userId })).toEqual([
        { field: 'userId', message: expect.stringMatching(/^userId must be a business-scoped user id/) },
      ]);
    }
  });

  it('refuses a business-scoped user id given as to, however it is spelled (Meta would accept it and never deliver)', async () => {
    for (const to of ['US.13491208655302741918', 'us.1349', '+BR.ENT.1502576394655843']) {
      expect(await errorsOf({ to })).toEqual([
        { field: 'to', message: 'to is a business-scoped user id, not a phone number: send it as userId' },
      ]);
    }
    expect(await errorsOf({ to: '+447700900123' })).toEqual([
      { field: 'to', message: expect.stringMatching(/^to must be E.164 digits/) },
    ]);
  });
});
