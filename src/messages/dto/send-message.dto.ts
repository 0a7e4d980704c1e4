import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { BSUID } from '../../upstream/upstream.types.js';
import { MESSAGE_TYPE_CATALOGUE, MESSAGE_TYPES, type MessageType, type MessageTypeFields } from '../types/catalogue.js';
import { stacked } from '../types/message-type.js';
import { ContextDto } from '../types/message-content.dto.js';

export const E164_DIGITS = /^[1-9]\d{7,14}$/;
export { BSUID, MESSAGE_TYPES, type MessageType };
export { LANGUAGE_CODE, PARAMETER_TYPES, TemplateComponentDto, TemplateParameterDto } from '../types/template.js';
/** Something that is a BSUID rather than a phone number, however it is spelled (`us.123…`, `+US.123…`). */
const LOOKS_LIKE_BSUID = /^\+?[A-Za-z]{2}\.[A-Za-z0-9.]+$/;

/** The content fields of every message type, declared (and decorated, below) by its catalogue file. */
const WithTypeFields = class {} as new () => Partial<MessageTypeFields>;

/**
 * POST /messages: sender, recipient, type, then each type's own fields (from the message-type catalogue, validated
 * only for the type sent) and the reply context.
 */
export class SendMessageDto extends WithTypeFields {
  @ApiProperty({ example: '402000000000011', description: 'A synced phone number of the key’s business account' })
  @IsString({ message: 'phoneNumberId must be a string' })
  @Matches(/^\d{1,32}$/, { message: 'phoneNumberId must be the numeric phone number id' })
  phoneNumberId: string;

  @ApiPropertyOptional({
    example: '447700900123',
    description:
      'The recipient’s phone number: E.164 digits, no plus sign or spaces (8–15 digits, no leading 0). Exactly one of `to` and `userId`.',
  })
  @ValidateIf((m: SendMessageDto) => m.userId === undefined || m.to !== undefined)
  @IsDefined({ message: 'to (or userId) is required' })
  @IsString({ message: 'to must be a string' })
  @IsNotEmpty({ message: 'to must not be empty' })
  // Meta reads a BSUID in `to` as a phone number, answers 200 and never delivers it: refused here instead.
  @ValidateBy(
    { name: 'notBsuid', validator: { validate: (v: unknown) => typeof v !== 'string' || !LOOKS_LIKE_BSUID.test(v) } },
    { message: 'to is a business-scoped user id, not a phone number: send it as userId' },
  )
  @Matches(E164_DIGITS, { message: 'to must be E.164 digits without plus or spaces (8-15 digits, no leading 0)' })
  to?: string;

  @ApiPropertyOptional({
    example: 'US.13491208655302741918',
    description:
      'The recipient’s business-scoped user id (BSUID) instead of `to`, for users known only by it (WhatsApp usernames): `CC.<id>` or the parent form `CC.ENT.<id>`. Exactly one of `to` and `userId`.',
  })
  @ValidateIf((m: SendMessageDto) => m.userId !== undefined)
  @ValidateBy(
    {
      name: 'notWithTo',
      validator: { validate: (_v: unknown, args) => (args?.object as SendMessageDto).to === undefined },
    },
    { message: 'give either to or userId, not both' },
  )
  @IsString({ message: 'userId must be a string' })
  @Matches(BSUID, {
    message: 'userId must be a business-scoped user id: CC.<id> or CC.ENT.<id> (up to 128 letters and digits)',
  })
  userId?: string;

  @ApiProperty({ enum: MESSAGE_TYPES, example: 'template' })
  @IsIn(MESSAGE_TYPES, { message: `type must be one of ${MESSAGE_TYPES.join(', ')}` })
  type: MessageType;

  /** Any type: a reply (decorated after the types' fields, so it comes last in the schema and in the errors). */
  context?: ContextDto;
}

// Each type's fields, in catalogue order, then the context: the order of the Swagger schema and of a 422's errors.
for (const definition of MESSAGE_TYPE_CATALOGUE) {
  for (const [field, decorate] of Object.entries<PropertyDecorator>(definition.fields))
    decorate(SendMessageDto.prototype, field);
}
stacked([
  ApiPropertyOptional({ type: ContextDto, description: 'Any type: reply to this message (quoted by WhatsApp)' }),
  IsOptional(),
  IsObject({ message: 'context must be an object' }),
  ValidateNested(),
  Type(() => ContextDto),
])(SendMessageDto.prototype, 'context');
