import { ApiProperty, getSchemaPath, PickType } from '@nestjs/swagger';
import type { Type } from '@nestjs/common';
import { MESSAGE_TYPE_CATALOGUE, MESSAGE_TYPES } from '../types/catalogue.js';
import { SendMessageDto } from './send-message.dto.js';

/**
 * The OpenAPI view of POST /messages: one schema per type under `oneOf`, discriminated by `type`, each
 * naming only its own fields (SendMessageDto, which validates, holds them all). Documentation only; each type's
 * fields and examples are its catalogue file's.
 */
const schemaName = (type: string) =>
  `Send${type.replace(/(^|_)(\w)/g, (_m, _u, c: string) => c.toUpperCase())}MessageDto`;

function schemaFor(definition: (typeof MESSAGE_TYPE_CATALOGUE)[number]): Type<unknown> {
  const fields = Object.keys(definition.fields) as (keyof SendMessageDto)[];
  class Schema extends PickType(SendMessageDto, [
    'phoneNumberId',
    'to',
    'userId',
    'type',
    'context',
    ...fields,
  ] as const) {}
  Object.defineProperty(Schema, 'name', { value: schemaName(definition.type) });
  ApiProperty({ enum: [definition.type], example: definition.type })(Schema.prototype, 'type');
  for (const field of definition.required ?? fields) ApiProperty({ required: true })(Schema.prototype, field);
  return Schema;
}

export const SEND_MESSAGE_SCHEMAS = MESSAGE_TYPE_CATALOGUE.map(schemaFor);

const base = { phoneNumberId: '402000000000011', to: '447700900123' };

/**
 * One example per type, as `examples` of the request body. Each succeeds as given against what dev.sh seeds
 * (the simulator's first account, its synced templates, and a customer service window opened by an inbound
 * message from `447700900123` / `US.13491208655302741918`): test/e2e/swagger-examples.e2e-spec.ts sends each.
 */
export const SEND_MESSAGE_EXAMPLES: Record<string, { summary: string; value: object }> = {
  ...Object.fromEntries(
    MESSAGE_TYPE_CATALOGUE.flatMap((definition) =>
      Object.entries<{ summary: string; value: object }>(definition.examples).map(([name, { summary, value }]) => [
        name,
        { summary, value: { ...base, ...value } },
      ]),
    ),
  ),
  user_id: {
    summary: 'To a business-scoped user id (a username user), instead of to',
    value: {
      phoneNumberId: base.phoneNumberId,
      userId: 'US.13491208655302741918',
      type: 'text',
      text: { body: 'Thanks, your order is on its way.' },
    },
  },
  reply: {
    summary: 'Any type as a reply (context)',
    value: {
      ...base,
      type: 'text',
      text: { body: 'Yes, that works.' },
      context: { message_id: 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=' },
    },
  },
};

export const SEND_MESSAGE_BODY = {
  schema: {
    oneOf: SEND_MESSAGE_SCHEMAS.map((s) => ({ $ref: getSchemaPath(s) })),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(MESSAGE_TYPES.map((t, i) => [t, getSchemaPath(SEND_MESSAGE_SCHEMAS[i]!)])),
    },
  },
  examples: SEND_MESSAGE_EXAMPLES,
};
