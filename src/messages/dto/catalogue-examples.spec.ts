import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { flattenValidationErrors } from '../../core/contract/validation.js';
import { SendMessageDto } from './send-message.dto.js';
import { MESSAGE_TYPE_CATALOGUE, MESSAGE_TYPES, messageType } from '../types/catalogue.js';
import { text } from '../types/text.js';

const sender = { phoneNumberId: '402000000000011', to: '447700900123' };
const examples = MESSAGE_TYPE_CATALOGUE.flatMap((d) =>
  Object.entries<{ value: object }>(d.examples).map(([name, { value }]) => [d.type, name, value] as const),
);

/** The 422 `errors` a body would get from the global pipe (whitelist, forbidNonWhitelisted). */
async function errorsOf(body: object) {
  return flattenValidationErrors(
    await validate(plainToInstance(SendMessageDto, body), { whitelist: true, forbidNonWhitelisted: true }),
  );
}

describe('the message-type catalogue', () => {
  it('lists each type once, with at least one example each', () => {
    expect(new Set(MESSAGE_TYPES).size).toBe(MESSAGE_TYPES.length);
    for (const d of MESSAGE_TYPE_CATALOGUE) expect(Object.keys(d.examples).length).toBeGreaterThan(0);
  });

  it.each(examples)('%s example %s: valid as a send body, sent upstream as its type', async (type, _name, value) => {
    const body = { ...sender, ...value };
    expect(await errorsOf(body)).toEqual([]);
    expect(messageType(type).upstream(plainToInstance(SendMessageDto, body)).type).toBe(type);
  });

  it('requires the sent type’s fields and does not look at another type’s', async () => {
    expect(await errorsOf({ ...sender, type: 'image' })).toEqual([
      { field: 'image', message: 'image is required for image messages' },
    ]);
    expect(await errorsOf({ ...sender, type: 'text' })).toEqual([
      { field: 'text', message: 'text is required for text messages' },
    ]);
    expect(await errorsOf({ ...sender, type: 'template' })).toEqual([
      { field: 'templateName', message: 'templateName is required for template messages' },
      { field: 'templateLanguage', message: 'templateLanguage is required for template messages' },
    ]);
    expect(
      await errorsOf({
        ...sender,
        type: 'reaction',
        reaction: { message_id: 'wamid.X', emoji: '👍' },
        image: { link: 'https://cdn.example.com/p.jpg' },
      }),
    ).toEqual([]);
    expect(await errorsOf({ ...sender, type: 'text', text: { body: 'hi' }, nope: 1 })).toEqual([
      { field: 'nope', message: 'nope is not allowed' },
    ]);
  });

  it('keeps the order of fields in a 422: sender, recipient, type, each type’s fields in catalogue order, context last', async () => {
    const errors = await errorsOf({
      phoneNumberId: 'x',
      to: 'y',
      type: 'template',
      templateLanguage: 'english',
      components: 'no',
      context: 'no',
    });
    expect(errors.map((e) => e.field)).toEqual([
      'phoneNumberId',
      'to',
      'templateName',
      'templateLanguage',
      'components',
      'context',
    ]);
  });

  it('says which types are sent any time and which only within the 24 h window', () => {
    expect(MESSAGE_TYPE_CATALOGUE.filter((d) => d.window === 'any_time').map((d) => d.type)).toEqual(['template']);
  });

  it('stores a text as sent, with its preview flag in either spelling, and sends Meta’s preview_url', () => {
    const dto = plainToInstance(SendMessageDto, {
      ...sender,
      type: 'text',
      text: { body: 'See https://example.com', preview_url: true },
    });
    expect(text.stored(dto)).toEqual({ text: { body: 'See https://example.com', previewUrl: true } });
    expect(text.upstream(dto)).toEqual({ type: 'text', text: { body: 'See https://example.com', preview_url: true } });
    expect(text.upstream(plainToInstance(SendMessageDto, { ...sender, type: 'text', text: { body: 'hi' } }))).toEqual({
      type: 'text',
      text: { body: 'hi', preview_url: false },
    });
  });

  it('stores a template’s components (none: an empty list) and sends them under template', () => {
    const dto = plainToInstance(SendMessageDto, {
      ...sender,
      type: 'template',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
    });
    expect(messageType('template').stored(dto)).toEqual({ components: [] });
    expect(messageType('template').upstream(dto)).toEqual({
      type: 'template',
      template: { name: 'hello_world', language: { code: 'en_US' }, components: undefined },
    });
  });
});
