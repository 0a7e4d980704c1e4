import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, ValidateIf, ValidateNested } from 'class-validator';
import { ContactDto } from './message-content.dto.js';
import { apply, defineMessageType, given } from './message-type.js';

/** 1 to 10 contact cards in Meta's contact object (24 h window). */
export const contacts = defineMessageType<'contacts', { contacts?: ContactDto[] }>({
  type: 'contacts',
  fields: {
    contacts: apply([
      ApiPropertyOptional({
        type: [ContactDto],
        description: 'Required when type is contacts: 1 to 10 contact objects',
      }),
      ValidateIf((m: { type?: string }) => m.type === 'contacts'),
      IsDefined({ message: 'contacts is required for contacts messages' }),
      IsArray({ message: 'contacts must be an array' }),
      ArrayMinSize(1, { message: 'contacts must have 1 to 10 contacts' }),
      ArrayMaxSize(10, { message: 'at most 10 contacts', context: { at: 10 } }),
      ValidateNested({ each: true }),
      Type(() => ContactDto),
    ]),
  },
  examples: {
    contacts: {
      summary: 'Contacts',
      value: {
        type: 'contacts',
        contacts: [
          {
            name: { formatted_name: 'Priya Shah', first_name: 'Priya' },
            phones: [{ phone: '+44 7700 900123', type: 'CELL' }],
          },
        ],
      },
    },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'contacts', content: given(request.contacts, 'contacts') }),
  stored: (request) => ({ contacts: request.contacts }),
});
