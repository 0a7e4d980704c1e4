import { checkRecipients, MAX_RECIPIENT_ERRORS } from './campaign-recipients.js';

describe('checkRecipients', () => {
  it('keeps phone numbers and user ids with their components, in order', () => {
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Priya' }] }];
    expect(checkRecipients([{ to: '447700900123', components }, { userId: 'US.13491208655302741918' }])).toEqual({
      recipients: [
        { to: '447700900123', userId: null, components },
        { to: null, userId: 'US.13491208655302741918', components: null },
      ],
      errors: [],
    });
  });

  it('names each bad recipient by its index and field', () => {
    const { errors } = checkRecipients([
      'not an object',
      {},
      { to: '447700900123', userId: 'US.1' },
      { to: '+44 7700 900123' },
      { userId: 'nope' },
      { to: '447700900124', name: 'x' },
      { to: '447700900125', components: [{ type: 'footer', parameters: [] }] },
      { to: '447700900126', components: [{ type: 'button', parameters: [] }] },
      { to: '447700900127', components: [{ type: 'body', parameters: [{ type: 'sql' }] }] },
    ]);
    expect(errors.map((e) => e.field)).toEqual([
      'recipients.0',
      'recipients.1.to',
      'recipients.2.userId',
      'recipients.3.to',
      'recipients.4.userId',
      'recipients.5.name',
      'recipients.6.components',
      'recipients.7.components',
      'recipients.8.components',
    ]);
    expect(errors[3]!.message).toBe('recipients.3.to must be E.164 digits without plus or spaces');
    expect(errors[7]!.message).toMatch(/0\.sub_type must be one of url/);
  });

  it('refuses a recipient given twice (a campaign reaches each once), naming the repeat and the first', () => {
    const { errors } = checkRecipients([{ to: '447700900123' }, { to: '447700900124' }, { to: '447700900123' }]);
    expect(errors).toEqual([
      {
        field: 'recipients.2.to',
        message: 'recipients.2 repeats recipients.0: a campaign sends to each recipient once',
      },
    ]);
  });

  it(`lists at most ${MAX_RECIPIENT_ERRORS} problems`, () => {
    expect(checkRecipients(Array.from({ length: 500 }, () => ({ to: 'x' }))).errors).toHaveLength(MAX_RECIPIENT_ERRORS);
  });
});
