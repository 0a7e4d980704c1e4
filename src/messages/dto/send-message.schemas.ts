import { ApiProperty, getSchemaPath, PickType } from '@nestjs/swagger';
import type { Type } from '@nestjs/common';
import { MESSAGE_TYPES, SendMessageDto, type MessageType } from './send-message.dto.js';

/**
 * The OpenAPI view of POST /messages: one schema per type under `oneOf`, discriminated by `type`, each
 * naming only its own fields (SendMessageDto, which validates, holds them all). Documentation only.
 */
const FIELDS: Record<MessageType, Array<keyof SendMessageDto>> = {
  template: ['templateName', 'templateLanguage', 'components'],
  text: ['text'],
  image: ['image'],
  video: ['video'],
  audio: ['audio'],
  document: ['document'],
  sticker: ['sticker'],
  location: ['location'],
  contacts: ['contacts'],
  interactive: ['interactive'],
  reaction: ['reaction'],
};

const REQUIRED: Partial<Record<MessageType, Array<keyof SendMessageDto>>> = { template: ['templateName', 'templateLanguage'] };

const schemaName = (type: string) => `Send${type.replace(/(^|_)(\w)/g, (_m, _u, c: string) => c.toUpperCase())}MessageDto`;

function schemaFor(type: MessageType): Type<unknown> {
  const fields = FIELDS[type];
  class Schema extends PickType(SendMessageDto, ['phoneNumberId', 'to', 'userId', 'type', 'context', ...fields] as const) {}
  Object.defineProperty(Schema, 'name', { value: schemaName(type) });
  ApiProperty({ enum: [type], example: type })(Schema.prototype, 'type');
  for (const field of type === 'template' ? (REQUIRED.template ?? []) : fields) ApiProperty({ required: true })(Schema.prototype, field);
  return Schema;
}

export const SEND_MESSAGE_SCHEMAS = MESSAGE_TYPES.map(schemaFor);

const base = { phoneNumberId: '402000000000011', to: '447700900123' };

/**
 * One example per type, as `examples` of the request body. Each succeeds as given against what dev.sh seeds
 * (the simulator's first account, its synced templates, and a customer service window opened by an inbound
 * message from `447700900123` / `US.13491208655302741918`): test/e2e/swagger-examples.e2e-spec.ts sends each.
 */
export const SEND_MESSAGE_EXAMPLES: Record<string, { summary: string; value: object }> = {
  template: {
    summary: 'Template (any time): header, body and URL button parameters, as the synced template has them',
    value: {
      ...base,
      type: 'template',
      templateName: 'parcel_update',
      templateLanguage: 'en_GB',
      components: [
        { type: 'header', parameters: [{ type: 'text', text: 'ORD-7781' }] },
        { type: 'body', parameters: [{ type: 'text', text: 'Priya' }, { type: 'text', text: 'ORD-7781' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'ORD-7781' }] },
      ],
    },
  },
  text: { summary: 'Text (24 h window)', value: { ...base, type: 'text', text: { body: 'Your parcel is ready for pickup.' } } },
  image: { summary: 'Image by link', value: { ...base, type: 'image', image: { link: 'https://cdn.example.com/p.jpg', caption: 'Your parcel' } } },
  video: { summary: 'Video by link (or `id` of an upload: POST …/phone-numbers/{id}/media)', value: { ...base, type: 'video', video: { link: 'https://cdn.example.com/how-to-fit.mp4', caption: 'How to fit it' } } },
  audio: { summary: 'Audio', value: { ...base, type: 'audio', audio: { link: 'https://cdn.example.com/voice.ogg' } } },
  document: { summary: 'Document with file name', value: { ...base, type: 'document', document: { link: 'https://cdn.example.com/invoice.pdf', caption: 'Invoice', filename: 'invoice-7781.pdf' } } },
  sticker: { summary: 'Sticker', value: { ...base, type: 'sticker', sticker: { link: 'https://cdn.example.com/thumbs-up.webp' } } },
  location: { summary: 'Location', value: { ...base, type: 'location', location: { latitude: 51.5072, longitude: -0.1276, name: 'Depot', address: '1 Example Street, London' } } },
  contacts: { summary: 'Contacts', value: { ...base, type: 'contacts', contacts: [{ name: { formatted_name: 'Priya Shah', first_name: 'Priya' }, phones: [{ phone: '+44 7700 900123', type: 'CELL' }] }] } },
  interactive_button: {
    summary: 'Interactive reply buttons (≤ 3)',
    value: { ...base, type: 'interactive', interactive: { type: 'button', body: { text: 'Which slot suits you?' }, action: { buttons: [{ type: 'reply', reply: { id: 'am', title: 'Morning' } }, { type: 'reply', reply: { id: 'pm', title: 'Afternoon' } }] } } },
  },
  interactive_list: {
    summary: 'Interactive list (≤ 10 rows)',
    value: { ...base, type: 'interactive', interactive: { type: 'list', body: { text: 'Pick a slot' }, action: { button: 'Slots', sections: [{ title: 'Tomorrow', rows: [{ id: 'a', title: 'Morning', description: '8–12' }] }] } } },
  },
  interactive_cta_url: {
    summary: 'Interactive call-to-action URL',
    value: { ...base, type: 'interactive', interactive: { type: 'cta_url', body: { text: 'Track your parcel' }, action: { name: 'cta_url', parameters: { display_text: 'Track', url: 'https://parcel.example.com/t/ORD-7781' } } } },
  },
  reaction: { summary: 'Reaction (empty emoji removes it)', value: { ...base, type: 'reaction', reaction: { message_id: 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=', emoji: '👍' } } },
  user_id: {
    summary: 'To a business-scoped user id (a username user), instead of to',
    value: { phoneNumberId: base.phoneNumberId, userId: 'US.13491208655302741918', type: 'text', text: { body: 'Thanks, your order is on its way.' } },
  },
  reply: { summary: 'Any type as a reply (context)', value: { ...base, type: 'text', text: { body: 'Yes, that works.' }, context: { message_id: 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=' } } },
};

export const SEND_MESSAGE_BODY = {
  schema: {
    oneOf: SEND_MESSAGE_SCHEMAS.map((s) => ({ $ref: getSchemaPath(s) })),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(MESSAGE_TYPES.map((t, i) => [t, getSchemaPath(SEND_MESSAGE_SCHEMAS[i]!)])) },
  },
  examples: SEND_MESSAGE_EXAMPLES,
};
