import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  MaxLength,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { BSUID } from '../../upstream/upstream.types.js';
import {
  apply,
  AudioContentDto,
  ContactDto,
  ContextDto,
  DocumentContentDto,
  ImageContentDto,
  InteractiveContentDto,
  LocationContentDto,
  ReactionContentDto,
  StickerContentDto,
  VideoContentDto,
} from './message-content.dto.js';

export const E164_DIGITS = /^[1-9]\d{7,14}$/;
export { BSUID };
/** Something that is a BSUID rather than a phone number, however it is spelled (`us.123…`, `+US.123…`). */
const LOOKS_LIKE_BSUID = /^\+?[A-Za-z]{2}\.[A-Za-z0-9.]+$/;
export const LANGUAGE_CODE = /^[a-z]{2,3}_[A-Z]{2}$/;
export const MESSAGE_TYPES = ['template', 'text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts', 'interactive', 'reaction'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
/** The types whose content is an object (or array) in Meta's own shape under the field named after the type. */
export type ContentType = Exclude<MessageType, 'template' | 'text'>;
export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;

export const PARAMETER_TYPES = ['text', 'currency', 'date_time', 'image', 'document', 'video', 'location', 'payload', 'coupon_code', 'action'];

/** One template parameter, in Meta's format. Media and structured values are passed through as given. */
export class TemplateParameterDto {
  @ApiProperty({ enum: PARAMETER_TYPES, example: 'text' })
  @IsIn(PARAMETER_TYPES, { message: `type must be one of ${PARAMETER_TYPES.join(', ')}` })
  type: string;

  @ApiPropertyOptional({ example: 'Priya' })
  @ValidateIf((p: TemplateParameterDto) => p.type === 'text' || p.text !== undefined)
  @IsString({ message: 'text must be a string' })
  @Length(1, 32768, { message: 'text must be 1 to 32768 characters' })
  text?: string;

  @ApiPropertyOptional({ description: 'For NAMED templates: the placeholder this value fills', example: 'first_name' })
  @IsOptional()
  @Matches(/^[a-z0-9_]{1,64}$/, { message: 'parameter_name must be lowercase letters, digits and underscores' })
  parameter_name?: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) payload?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(64) coupon_code?: string;
  @ApiPropertyOptional({ example: { link: 'https://cdn.example.com/p.jpg' } }) @IsOptional() @IsObject() image?: object;
  @ApiPropertyOptional() @IsOptional() @IsObject() video?: object;
  @ApiPropertyOptional() @IsOptional() @IsObject() document?: object;
  @ApiPropertyOptional() @IsOptional() @IsObject() location?: object;
  @ApiPropertyOptional() @IsOptional() @IsObject() currency?: object;
  @ApiPropertyOptional() @IsOptional() @IsObject() date_time?: object;
  @ApiPropertyOptional() @IsOptional() @IsObject() action?: object;
}

/** A template component with its parameters, in Meta's format (`header`, `body`, `button`). */
export class TemplateComponentDto {
  @ApiProperty({ enum: ['header', 'body', 'button'] })
  @IsIn(['header', 'body', 'button'], { message: 'type must be one of header, body, button' })
  type: string;

  @ApiPropertyOptional({ enum: ['url', 'quick_reply', 'copy_code', 'flow', 'catalog', 'mpm'], description: 'Required for buttons' })
  @ValidateIf((c: TemplateComponentDto) => c.type === 'button')
  @IsIn(['url', 'quick_reply', 'copy_code', 'flow', 'catalog', 'mpm'], { message: 'sub_type must be one of url, quick_reply, copy_code, flow, catalog, mpm' })
  sub_type?: string;

  @ApiPropertyOptional({ example: '0', description: "Required for buttons: the button's position in the template" })
  @ValidateIf((c: TemplateComponentDto) => c.type === 'button')
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : value))
  @Matches(/^\d{1,2}$/, { message: 'index must be the button position (0-99)' })
  index?: string;

  @ApiProperty({ type: [TemplateParameterDto] })
  @IsDefined({ message: 'parameters is required (an empty array for none)' })
  @IsArray({ message: 'parameters must be an array' })
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => TemplateParameterDto)
  parameters: TemplateParameterDto[];
}

export class TextContentDto {
  @ApiProperty({ minLength: 1, maxLength: 4096, example: 'Your parcel is ready for pickup.' })
  @IsString({ message: 'body must be a string' })
  @Length(1, 4096, { message: 'body must be 1 to 4096 characters' })
  body: string;

  // The default is said in words, not as `default`: generators (openapi-typescript) make a field with a schema
  // default required, and a client could not send a text without it.
  @ApiPropertyOptional({ description: 'Show a preview of the first URL in the body; false when absent' })
  @IsOptional()
  @IsBoolean({ message: 'previewUrl must be a boolean' })
  previewUrl?: boolean;

  @ApiPropertyOptional({ description: "Meta's spelling of previewUrl" })
  @IsOptional()
  @IsBoolean({ message: 'preview_url must be a boolean' })
  preview_url?: boolean;
}

export class SendMessageDto {
  @ApiProperty({ example: '402000000000011', description: 'A synced phone number of the key’s business account' })
  @IsString({ message: 'phoneNumberId must be a string' })
  @Matches(/^\d{1,32}$/, { message: 'phoneNumberId must be the numeric phone number id' })
  phoneNumberId: string;

  @ApiPropertyOptional({
    example: '447700900123',
    description: 'The recipient’s phone number: E.164 digits, no plus sign or spaces (8–15 digits, no leading 0). Exactly one of `to` and `userId`.',
  })
  @ValidateIf((m: SendMessageDto) => m.userId === undefined || m.to !== undefined)
  @IsDefined({ message: 'to (or userId) is required' })
  @IsString({ message: 'to must be a string' })
  @IsNotEmpty({ message: 'to must not be empty' })
  // Meta reads a BSUID in `to` as a phone number, answers 200 and never delivers it: refused here instead.
  @ValidateBy({ name: 'notBsuid', validator: { validate: (v: unknown) => typeof v !== 'string' || !LOOKS_LIKE_BSUID.test(v) } }, { message: 'to is a business-scoped user id, not a phone number: send it as userId' })
  @Matches(E164_DIGITS, { message: 'to must be E.164 digits without plus or spaces (8-15 digits, no leading 0)' })
  to?: string;

  @ApiPropertyOptional({
    example: 'US.13491208655302741918',
    description:
      'The recipient’s business-scoped user id (BSUID) instead of `to`, for users known only by it (WhatsApp usernames): `CC.<id>` or the parent form `CC.ENT.<id>`. Exactly one of `to` and `userId`.',
  })
  @ValidateIf((m: SendMessageDto) => m.userId !== undefined)
  @ValidateBy({ name: 'notWithTo', validator: { validate: (_v: unknown, args) => (args?.object as SendMessageDto).to === undefined } }, { message: 'give either to or userId, not both' })
  @IsString({ message: 'userId must be a string' })
  @Matches(BSUID, { message: 'userId must be a business-scoped user id: CC.<id> or CC.ENT.<id> (up to 128 letters and digits)' })
  userId?: string;

  @ApiProperty({ enum: MESSAGE_TYPES, example: 'template' })
  @IsIn(MESSAGE_TYPES, { message: `type must be one of ${MESSAGE_TYPES.join(', ')}` })
  type: MessageType;

  @ApiPropertyOptional({ example: 'parcel_update', description: 'Required when type is template' })
  @ValidateIf((m: SendMessageDto) => m.type === 'template')
  @IsDefined({ message: 'templateName is required for template messages' })
  @IsString({ message: 'templateName must be a string' })
  @IsNotEmpty({ message: 'templateName must not be empty' })
  @MaxLength(512)
  templateName?: string;

  @ApiPropertyOptional({ example: 'en_GB', description: 'Required when type is template; of the form ll_CC' })
  @ValidateIf((m: SendMessageDto) => m.type === 'template')
  @IsDefined({ message: 'templateLanguage is required for template messages' })
  @Matches(LANGUAGE_CODE, { message: 'templateLanguage must be of the form ll_CC (e.g. en_GB)' })
  templateLanguage?: string;

  @ApiPropertyOptional({ type: [TemplateComponentDto], description: "Template parameters in Meta's component format" })
  @ValidateIf((m: SendMessageDto) => m.type === 'template' && m.components !== undefined)
  @IsArray({ message: 'components must be an array' })
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => TemplateComponentDto)
  components?: TemplateComponentDto[];

  @ApiPropertyOptional({ type: TextContentDto, description: 'Required when type is text (only inside the 24 h customer service window)' })
  @ValidateIf((m: SendMessageDto) => m.type === 'text')
  @IsDefined({ message: 'text is required for text messages' })
  @IsObject({ message: 'text must be an object' })
  @ValidateNested()
  @Type(() => TextContentDto)
  text?: TextContentDto;

  // Each type's content is validated only when it is the type sent: the other fields cost one condition each.
  @contentOf('image', ImageContentDto, 'jpeg/png, ≤ 5 MB')
  image?: ImageContentDto;

  @contentOf('video', VideoContentDto, 'mp4/3gpp, ≤ 16 MB')
  video?: VideoContentDto;

  @contentOf('audio', AudioContentDto, 'aac/amr/mpeg/mp4/ogg (opus), ≤ 16 MB')
  audio?: AudioContentDto;

  @contentOf('document', DocumentContentDto, '≤ 100 MB')
  document?: DocumentContentDto;

  @contentOf('sticker', StickerContentDto, 'webp, ≤ 500 KB')
  sticker?: StickerContentDto;

  @contentOf('location', LocationContentDto)
  location?: LocationContentDto;

  @ApiPropertyOptional({ type: [ContactDto], description: 'Required when type is contacts: 1 to 10 contact objects' })
  @ValidateIf((m: SendMessageDto) => m.type === 'contacts')
  @IsDefined({ message: 'contacts is required for contacts messages' })
  @IsArray({ message: 'contacts must be an array' })
  @ArrayMinSize(1, { message: 'contacts must have 1 to 10 contacts' })
  @ArrayMaxSize(10, { message: 'at most 10 contacts', context: { at: 10 } })
  @ValidateNested({ each: true })
  @Type(() => ContactDto)
  contacts?: ContactDto[];

  @contentOf('interactive', InteractiveContentDto, 'button, list or cta_url')
  interactive?: InteractiveContentDto;

  @contentOf('reaction', ReactionContentDto)
  reaction?: ReactionContentDto;

  @ApiPropertyOptional({ type: ContextDto, description: 'Any type: reply to this message (quoted by WhatsApp)' })
  @IsOptional()
  @IsObject({ message: 'context must be an object' })
  @ValidateNested()
  @Type(() => ContextDto)
  context?: ContextDto;
}

/** Required, an object, validated as `cls`, when the message's type is `type`; otherwise not looked at. */
function contentOf(type: ContentType, cls: new () => object, note?: string): PropertyDecorator {
  return apply([
    ApiPropertyOptional({ type: cls, description: `Required when type is ${type}${note ? `: ${note}` : ''}` }),
    ValidateIf((m: SendMessageDto) => m.type === type),
    IsDefined({ message: `${type} is required for ${type} messages` }),
    IsObject({ message: `${type} must be an object` }),
    ValidateNested(),
    Type(() => cls),
  ]);
}
