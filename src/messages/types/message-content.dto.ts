import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  Equals,
  IsArray,
  IsDefined,
  IsIn,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import { apply } from './message-type.js';
import { withArticle } from '../../core/contract/validation.js';

/**
 * The content objects of the non-template message types, in Meta's own shape (snake_case, as the Cloud API
 * takes them), with Meta's limits. Each is validated only when its type is the one sent (see SendMessageDto); each type's file in
 * messages/types/ names its content object.
 */

const HTTPS = { protocols: ['https'], require_protocol: true, require_tld: false };
const httpsMessage = (field: string) => ({ message: `${field} must be an https URL` });

/** Fails when the sibling property `other` is also present: `link` and `id` exclude each other. */
function AbsentWith(other: string, message: string) {
  return (target: object, property: string) =>
    registerDecorator({
      name: 'absentWith',
      target: target.constructor,
      propertyName: property,
      options: { message },
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          value === undefined || (args.object as Record<string, unknown>)[other] === undefined,
      },
    });
}

/** Ids (as `idsOf` reads them from the array) that repeat: Meta refuses duplicate button and row ids. */
function UniqueIds(idsOf: (value: unknown[]) => unknown[], message: string) {
  return (target: object, property: string) =>
    registerDecorator({
      name: 'uniqueIds',
      target: target.constructor,
      propertyName: property,
      options: { message },
      validator: {
        validate(value: unknown) {
          if (!Array.isArray(value)) return true;
          const ids = idsOf(value).filter((id) => id !== undefined);
          return new Set(ids).size === ids.length;
        },
      },
    });
}

/** At most `max` items over all the arrays `key` of the array's elements (list rows over all sections). */
function NestedMax(key: string, max: number, message: string) {
  return (target: object, property: string) =>
    registerDecorator({
      name: 'nestedMax',
      target: target.constructor,
      propertyName: property,
      options: { message },
      validator: {
        validate: (value: unknown) =>
          !Array.isArray(value) ||
          value.reduce(
            (n: number, item) =>
              n +
              (Array.isArray((item as Record<string, unknown>)?.[key])
                ? (item as Record<string, unknown[]>)[key]!.length
                : 0),
            0,
          ) <= max,
      },
    });
}

/** One emoji (with its modifiers, variation selectors and ZWJ sequences, or a flag), or '' to remove a reaction. */
export const EMOJI =
  /^(?:(?:\p{Regional_Indicator}{2})|(?:[#*0-9]\uFE0F?\u20E3)|(?:\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})*(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})*)*))?$/u;

// ---- Media ----------------------------------------------------------------------------------------------------

/** `{ link | id }`: exactly one of a public https URL or the id of an uploaded media object. */
export class AudioContentDto {
  @ApiPropertyOptional({
    description: 'Public https URL of the file (exactly one of link or id)',
    example: 'https://cdn.example.com/voice.ogg',
  })
  @ValidateIf((m: AudioContentDto) => m.link !== undefined || m.id === undefined)
  @IsDefined({ message: 'exactly one of link or id is required' })
  @IsUrl(HTTPS, httpsMessage('link'))
  @MaxLength(2048)
  @AbsentWith('id', 'exactly one of link or id is allowed')
  link?: string;

  @ApiPropertyOptional({
    description: 'Media id from POST /business-accounts/{wabaId}/phone-numbers/{phoneNumberId}/media',
    example: '1037543291543636',
  })
  @IsOptional()
  @Matches(/^\d{1,32}$/, { message: 'id must be a media id (digits)' })
  id?: string;
}

export class StickerContentDto extends AudioContentDto {}

export class VideoContentDto extends AudioContentDto {
  @ApiPropertyOptional({ maxLength: 1024, example: 'How to fit the part' })
  @IsOptional()
  @IsString({ message: 'caption must be a string' })
  @Length(1, 1024, { message: 'caption must be 1 to 1024 characters' })
  caption?: string;
}

export class ImageContentDto extends VideoContentDto {}

export class DocumentContentDto extends VideoContentDto {
  @ApiPropertyOptional({ maxLength: 240, example: 'invoice-7781.pdf' })
  @IsOptional()
  @IsString({ message: 'filename must be a string' })
  @Length(1, 240, { message: 'filename must be 1 to 240 characters' })
  filename?: string;
}

// ---- Location -------------------------------------------------------------------------------------------------

export class LocationContentDto {
  @ApiProperty({ minimum: -90, maximum: 90, example: 51.5072 })
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'latitude must be a number' })
  @Min(-90, { message: 'latitude must be between -90 and 90' })
  @Max(90, { message: 'latitude must be between -90 and 90' })
  latitude: number;

  @ApiProperty({ minimum: -180, maximum: 180, example: -0.1276 })
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'longitude must be a number' })
  @Min(-180, { message: 'longitude must be between -180 and 180' })
  @Max(180, { message: 'longitude must be between -180 and 180' })
  longitude: number;

  @ApiPropertyOptional({ maxLength: 1000, example: 'Parcel Co depot' })
  @IsOptional()
  @IsString({ message: 'name must be a string' })
  @MaxLength(1000, { message: 'name must be at most 1000 characters' })
  name?: string;

  @ApiPropertyOptional({ maxLength: 1000, example: '1 Example Street, London' })
  @IsOptional()
  @IsString({ message: 'address must be a string' })
  @MaxLength(1000, { message: 'address must be at most 1000 characters' })
  address?: string;
}

// ---- Contacts (Meta's contact object) ----------------------------------------------------------------------------

const optionalText = (max: number) => [IsOptional(), IsString(), MaxLength(max)];

export class ContactNameDto {
  @ApiProperty({ example: 'Priya Shah' })
  @IsString({ message: 'formatted_name must be a string' })
  @Length(1, 512, { message: 'formatted_name must be 1 to 512 characters' })
  formatted_name: string;

  @ApiPropertyOptional({ example: 'Priya' }) @apply(optionalText(256)) first_name?: string;
  @ApiPropertyOptional({ example: 'Shah' }) @apply(optionalText(256)) last_name?: string;
  @ApiPropertyOptional() @apply(optionalText(256)) middle_name?: string;
  @ApiPropertyOptional() @apply(optionalText(64)) suffix?: string;
  @ApiPropertyOptional() @apply(optionalText(64)) prefix?: string;
}

export class ContactPhoneDto {
  @ApiPropertyOptional({ example: '+44 7700 900123' }) @apply(optionalText(64)) phone?: string;
  @ApiPropertyOptional({ example: 'CELL' }) @apply(optionalText(32)) type?: string;
  @ApiPropertyOptional({ example: '447700900123' }) @apply(optionalText(32)) wa_id?: string;
}

export class ContactEmailDto {
  @ApiPropertyOptional({ example: 'priya@example.com' }) @apply(optionalText(320)) email?: string;
  @ApiPropertyOptional({ example: 'WORK' }) @apply(optionalText(32)) type?: string;
}

export class ContactUrlDto {
  @ApiPropertyOptional({ example: 'https://example.com' }) @apply(optionalText(2048)) url?: string;
  @ApiPropertyOptional({ example: 'WORK' }) @apply(optionalText(32)) type?: string;
}

export class ContactAddressDto {
  @ApiPropertyOptional() @apply(optionalText(512)) street?: string;
  @ApiPropertyOptional() @apply(optionalText(256)) city?: string;
  @ApiPropertyOptional() @apply(optionalText(256)) state?: string;
  @ApiPropertyOptional() @apply(optionalText(32)) zip?: string;
  @ApiPropertyOptional() @apply(optionalText(256)) country?: string;
  @ApiPropertyOptional() @apply(optionalText(8)) country_code?: string;
  @ApiPropertyOptional({ example: 'WORK' }) @apply(optionalText(32)) type?: string;
}

export class ContactOrgDto {
  @ApiPropertyOptional() @apply(optionalText(256)) company?: string;
  @ApiPropertyOptional() @apply(optionalText(256)) department?: string;
  @ApiPropertyOptional() @apply(optionalText(256)) title?: string;
}

const nestedArray = (cls: () => new () => object, max = 20): PropertyDecorator =>
  apply([IsOptional(), IsArray(), ArrayMaxSize(max), ValidateNested({ each: true }), Type(cls)]);

export class ContactDto {
  @ApiProperty({ type: ContactNameDto })
  @IsDefined({ message: 'name is required' })
  @ValidateNested()
  @Type(() => ContactNameDto)
  name: ContactNameDto;

  @ApiPropertyOptional({ type: [ContactPhoneDto] }) @nestedArray(() => ContactPhoneDto) phones?: ContactPhoneDto[];
  @ApiPropertyOptional({ type: [ContactEmailDto] }) @nestedArray(() => ContactEmailDto) emails?: ContactEmailDto[];
  @ApiPropertyOptional({ type: [ContactUrlDto] }) @nestedArray(() => ContactUrlDto) urls?: ContactUrlDto[];
  @ApiPropertyOptional({ type: [ContactAddressDto] })
  @nestedArray(() => ContactAddressDto)
  addresses?: ContactAddressDto[];

  @ApiPropertyOptional({ type: ContactOrgDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => ContactOrgDto)
  org?: ContactOrgDto;

  @ApiPropertyOptional({ example: '1990-04-21' })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'birthday must be YYYY-MM-DD' })
  birthday?: string;
}

// ---- Interactive --------------------------------------------------------------------------------------------------

export const INTERACTIVE_TYPES = ['button', 'list', 'cta_url', 'flow', 'location_request_message'] as const;

export class InteractiveTextDto {
  @ApiProperty({ example: 'Your delivery slot' })
  @IsString({ message: 'text must be a string' })
  @Length(1, 1024, { message: 'text must be 1 to 1024 characters' })
  text: string;
}

export class InteractiveShortTextDto {
  @ApiProperty({ maxLength: 60, example: 'Parcel Co' })
  @IsString({ message: 'text must be a string' })
  @Length(1, 60, { message: 'text must be 1 to 60 characters' })
  text: string;
}

/** A media header's object: required when the header is of that type, validated like a message's media. */
function headerMedia(kind: string, cls: new () => object): PropertyDecorator {
  return apply([
    ApiPropertyOptional({ type: cls, description: `Required when the header type is ${kind}` }),
    ValidateIf((h: InteractiveHeaderDto) => h.type === kind || h[kind as keyof InteractiveHeaderDto] !== undefined),
    IsDefined({ message: `${kind} is required for ${withArticle(kind)} header` }),
    ValidateNested(),
    Type(() => cls),
  ]);
}

export class InteractiveHeaderDto {
  @ApiProperty({ enum: ['text', 'image', 'video', 'document'], example: 'text' })
  @IsIn(['text', 'image', 'video', 'document'], { message: 'type must be one of text, image, video, document' })
  type: string;

  @ApiPropertyOptional({ maxLength: 60, example: 'Parcel Co' })
  @ValidateIf((h: InteractiveHeaderDto) => h.type === 'text' || h.text !== undefined)
  @IsString({ message: 'text is required for a text header' })
  @Length(1, 60, { message: 'text must be 1 to 60 characters' })
  text?: string;

  @headerMedia('image', AudioContentDto)
  image?: AudioContentDto;

  @headerMedia('video', AudioContentDto)
  video?: AudioContentDto;

  @headerMedia('document', DocumentContentDto)
  document?: DocumentContentDto;
}

export class ReplyDto {
  @ApiProperty({ maxLength: 256, example: 'slot-am' })
  @IsString({ message: 'id must be a string' })
  @Length(1, 256, { message: 'id must be 1 to 256 characters' })
  id: string;

  @ApiProperty({ maxLength: 20, example: 'Morning' })
  @IsString({ message: 'title must be a string' })
  @Length(1, 20, { message: 'title must be 1 to 20 characters' })
  title: string;
}

export class ReplyButtonDto {
  @ApiProperty({ enum: ['reply'] })
  @Equals('reply', { message: 'type must be reply' })
  type: 'reply';

  @ApiProperty({ type: ReplyDto })
  @IsDefined({ message: 'reply is required' })
  @ValidateNested()
  @Type(() => ReplyDto)
  reply: ReplyDto;
}

export class ButtonActionDto {
  @ApiProperty({ type: [ReplyButtonDto], minItems: 1, maxItems: 3 })
  @IsDefined({ message: 'buttons is required for button messages' })
  @IsArray({ message: 'buttons must be an array' })
  @ArrayMinSize(1, { message: 'buttons must have 1 to 3 reply buttons' })
  @ArrayMaxSize(3, { message: 'at most 3 reply buttons', context: { at: 3 } })
  @UniqueIds(
    (buttons) => buttons.map((b) => (b as ReplyButtonDto | undefined)?.reply?.id),
    'button ids (reply.id) must be unique',
  )
  @ValidateNested({ each: true })
  @Type(() => ReplyButtonDto)
  buttons: ReplyButtonDto[];
}

export class ListRowDto {
  @ApiProperty({ maxLength: 200, example: 'slot-am' })
  @IsString({ message: 'id must be a string' })
  @Length(1, 200, { message: 'id must be 1 to 200 characters' })
  id: string;

  @ApiProperty({ maxLength: 24, example: 'Morning (8–12)' })
  @IsString({ message: 'title must be a string' })
  @Length(1, 24, { message: 'title must be 1 to 24 characters' })
  title: string;

  @ApiPropertyOptional({ maxLength: 72 })
  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @Length(1, 72, { message: 'description must be 1 to 72 characters' })
  description?: string;
}

export class ListSectionDto {
  @ApiPropertyOptional({
    maxLength: 24,
    example: 'Tomorrow',
    description: 'Required when there is more than one section',
  })
  @IsOptional()
  @IsString({ message: 'title must be a string' })
  @Length(1, 24, { message: 'title must be 1 to 24 characters' })
  title?: string;

  @ApiProperty({ type: [ListRowDto], minItems: 1, maxItems: 10 })
  @IsDefined({ message: 'rows is required' })
  @IsArray({ message: 'rows must be an array' })
  @ArrayMinSize(1, { message: 'rows must have 1 to 10 rows' })
  @ArrayMaxSize(10, { message: 'at most 10 rows', context: { at: 10 } })
  @ValidateNested({ each: true })
  @Type(() => ListRowDto)
  rows: ListRowDto[];
}

const rowIds = (sections: unknown[]) =>
  sections.flatMap((s) =>
    Array.isArray((s as ListSectionDto)?.rows) ? (s as ListSectionDto).rows.map((r) => r?.id) : [],
  );

export class ListActionDto {
  @ApiProperty({ maxLength: 20, example: 'Choose a slot', description: 'Label of the button that opens the list' })
  @IsString({ message: 'button is required for list messages (the label, 1 to 20 characters)' })
  @Length(1, 20, { message: 'button must be 1 to 20 characters' })
  button: string;

  @ApiProperty({ type: [ListSectionDto], minItems: 1, maxItems: 10 })
  @IsDefined({ message: 'sections is required for list messages' })
  @IsArray({ message: 'sections must be an array' })
  @ArrayMinSize(1, { message: 'sections must have 1 to 10 sections' })
  @ArrayMaxSize(10, { message: 'at most 10 sections', context: { at: 10 } })
  @NestedMax('rows', 10, 'sections must have at most 10 rows in all')
  @UniqueIds(rowIds, 'row ids must be unique across sections')
  @ValidateNested({ each: true })
  @Type(() => ListSectionDto)
  sections: ListSectionDto[];
}

export class CtaUrlParametersDto {
  @ApiProperty({ maxLength: 20, example: 'Track parcel' })
  @IsString({ message: 'display_text must be a string' })
  @Length(1, 20, { message: 'display_text must be 1 to 20 characters' })
  display_text: string;

  @ApiProperty({ example: 'https://parcel.example.com/t/ORD-7781' })
  @IsUrl(HTTPS, httpsMessage('url'))
  @MaxLength(2048)
  url: string;
}

export class CtaUrlActionDto {
  @ApiProperty({ enum: ['cta_url'] })
  @Equals('cta_url', { message: 'name must be cta_url' })
  name: 'cta_url';

  @ApiProperty({ type: CtaUrlParametersDto })
  @IsDefined({ message: 'parameters is required for cta_url messages' })
  @ValidateNested()
  @Type(() => CtaUrlParametersDto)
  parameters: CtaUrlParametersDto;
}

/** A flow's first screen and its initial data (`flow_action: navigate`). */
export class FlowActionPayloadDto {
  @ApiProperty({ example: 'DELIVERY_SLOT', description: "The flow's first screen (its id in the flow JSON)" })
  @IsString({ message: 'screen must be a string' })
  @Length(1, 256, { message: 'screen must be 1 to 256 characters' })
  screen: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { order_id: 'ORD-7781' },
    description: "The screen's initial data, as the flow JSON declares it",
  })
  @IsOptional()
  @IsObject({ message: 'data must be an object' })
  data?: Record<string, unknown>;
}

/** Meta's flow parameters (`action.parameters` of an interactive `flow`). */
export class FlowParametersDto {
  @ApiProperty({ enum: ['3'], example: '3', description: 'Meta\'s flow message version: "3"' })
  @Equals('3', { message: 'flow_message_version must be "3"' })
  flow_message_version: '3';

  @ApiPropertyOptional({
    maxLength: 256,
    example: 'ORD-7781',
    description: "Yours: comes back in the user's answer (nfm_reply) so you can tell whose it is",
  })
  @IsOptional()
  @IsString({ message: 'flow_token must be a string' })
  @Length(1, 256, { message: 'flow_token must be 1 to 256 characters' })
  flow_token?: string;

  @ApiPropertyOptional({
    example: '1188000000000001',
    description: "The flow's id (exactly one of flow_id or flow_name)",
  })
  @ValidateIf((p: FlowParametersDto) => p.flow_id !== undefined || p.flow_name === undefined)
  @IsDefined({ message: 'flow_id or flow_name is required' })
  @Matches(/^\d{1,32}$/, { message: 'flow_id must be the digits of a flow id' })
  @AbsentWith('flow_name', 'exactly one of flow_id or flow_name is allowed')
  flow_id?: string;

  @ApiPropertyOptional({
    example: 'delivery_slot',
    description: "The flow's name (exactly one of flow_id or flow_name)",
  })
  @IsOptional()
  @IsString({ message: 'flow_name must be a string' })
  @Length(1, 200, { message: 'flow_name must be 1 to 200 characters' })
  flow_name?: string;

  @ApiProperty({ maxLength: 30, example: 'Choose a slot', description: 'The label of the button that opens the flow' })
  @IsDefined({ message: 'flow_cta is required (the button label, 1 to 30 characters)' })
  @IsString({ message: 'flow_cta must be a string' })
  @Length(1, 30, { message: 'flow_cta must be 1 to 30 characters' })
  flow_cta: string;

  @ApiPropertyOptional({ enum: ['navigate', 'data_exchange'], description: "Meta's default: navigate" })
  @IsOptional()
  @IsIn(['navigate', 'data_exchange'], { message: 'flow_action must be navigate or data_exchange' })
  flow_action?: 'navigate' | 'data_exchange';

  @ApiPropertyOptional({ type: FlowActionPayloadDto, description: 'With navigate: the first screen (and its data)' })
  @IsOptional()
  @ValidateNested()
  @Type(() => FlowActionPayloadDto)
  flow_action_payload?: FlowActionPayloadDto;

  @ApiPropertyOptional({ enum: ['draft', 'published'], description: 'draft sends an unpublished flow (testing only)' })
  @IsOptional()
  @IsIn(['draft', 'published'], { message: 'mode must be draft or published' })
  mode?: 'draft' | 'published';
}

export class FlowActionDto {
  @ApiProperty({ enum: ['flow'] })
  @Equals('flow', { message: 'name must be flow' })
  name: 'flow';

  @ApiProperty({ type: FlowParametersDto })
  @IsDefined({ message: 'parameters is required for flow messages' })
  @ValidateNested()
  @Type(() => FlowParametersDto)
  parameters: FlowParametersDto;
}

/** A location request: the user is asked to share a location (answered by an inbound `location`). */
export class LocationRequestActionDto {
  @ApiProperty({ enum: ['send_location'] })
  @Equals('send_location', { message: 'name must be send_location' })
  name: 'send_location';
}

const ACTIONS = {
  button: ButtonActionDto,
  list: ListActionDto,
  cta_url: CtaUrlActionDto,
  flow: FlowActionDto,
  location_request_message: LocationRequestActionDto,
} as const;

/** The action shapes (by interactive type), for Swagger's oneOf. */
export const INTERACTIVE_ACTION_MODELS = Object.values(ACTIONS);

export class InteractiveContentDto {
  @ApiProperty({ enum: INTERACTIVE_TYPES, example: 'button' })
  @IsIn(INTERACTIVE_TYPES, { message: `type must be one of ${INTERACTIVE_TYPES.join(', ')}` })
  type: (typeof INTERACTIVE_TYPES)[number];

  @ApiPropertyOptional({ type: InteractiveHeaderDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => InteractiveHeaderDto)
  header?: InteractiveHeaderDto;

  @ApiProperty({ type: InteractiveTextDto })
  @IsDefined({ message: 'body is required' })
  @ValidateNested()
  @Type(() => InteractiveTextDto)
  body: InteractiveTextDto;

  @ApiPropertyOptional({ type: InteractiveShortTextDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => InteractiveShortTextDto)
  footer?: InteractiveShortTextDto;

  @ApiProperty({
    description:
      'buttons (button), button + sections (list), name + parameters (cta_url, flow) or name send_location (location_request_message)',
    oneOf: Object.values(ACTIONS).map((model) => ({ $ref: `#/components/schemas/${model.name}` })),
  })
  @IsDefined({ message: 'action is required' })
  @ValidateNested()
  // The action's shape depends on the interactive type, which is its parent's field.
  @Type(
    (opts) =>
      ACTIONS[(opts?.object as { type?: keyof typeof ACTIONS } | undefined)?.type ?? 'button'] ?? ButtonActionDto,
  )
  action: ButtonActionDto | ListActionDto | CtaUrlActionDto | FlowActionDto | LocationRequestActionDto;
}

// ---- Reaction and context -----------------------------------------------------------------------------------------

export class ReactionContentDto {
  @ApiProperty({
    description: 'The wamid of the message reacted to',
    example: 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=',
  })
  @IsString({ message: 'message_id must be a string' })
  @Length(1, 256, { message: 'message_id must be 1 to 256 characters' })
  message_id: string;

  @ApiProperty({ description: 'One emoji; an empty string removes the reaction', example: '👍' })
  @IsString({ message: 'emoji must be a string' })
  @Matches(EMOJI, { message: 'emoji must be a single emoji (or empty to remove the reaction)' })
  emoji: string;
}

export class ContextDto {
  @ApiProperty({
    description: 'The wamid of the message replied to',
    example: 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=',
  })
  @IsString({ message: 'message_id must be a string' })
  @Length(1, 256, { message: 'message_id must be 1 to 256 characters' })
  message_id: string;
}
