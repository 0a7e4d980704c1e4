import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import type { TemplateSend } from '../../upstream/upstream.types.js';
import { defineMessageType, given, stacked } from './message-type.js';

export const LANGUAGE_CODE = /^[a-z]{2,3}_[A-Z]{2}$/;
export const PARAMETER_TYPES = [
  'text',
  'currency',
  'date_time',
  'image',
  'document',
  'video',
  'location',
  'payload',
  'coupon_code',
  'action',
];

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

  @ApiPropertyOptional({
    enum: ['url', 'quick_reply', 'copy_code', 'flow', 'catalog', 'mpm'],
    description: 'Required for buttons',
  })
  @ValidateIf((c: TemplateComponentDto) => c.type === 'button')
  @IsIn(['url', 'quick_reply', 'copy_code', 'flow', 'catalog', 'mpm'], {
    message: 'sub_type must be one of url, quick_reply, copy_code, flow, catalog, mpm',
  })
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

const isTemplate = (m: { type?: string }) => m.type === 'template';

/**
 * An approved template of the business account, by name and language, with its parameters: the one type that may
 * start a conversation (any time). Whether the template exists, is approved and gets the parameters it needs is
 * checked before sending against the synced templates (PreSendChecks), and by the simulator against its own.
 */
export const template = defineMessageType<
  'template',
  { templateName?: string; templateLanguage?: string; components?: TemplateComponentDto[] }
>({
  type: 'template',
  fields: {
    templateName: stacked([
      // Decorated outside a class body (no design:type metadata): the Swagger type is said.
      ApiPropertyOptional({ type: String, example: 'parcel_update', description: 'Required when type is template' }),
      ValidateIf(isTemplate),
      IsDefined({ message: 'templateName is required for template messages' }),
      IsString({ message: 'templateName must be a string' }),
      IsNotEmpty({ message: 'templateName must not be empty' }),
      MaxLength(512),
    ]),
    templateLanguage: stacked([
      ApiPropertyOptional({
        type: String,
        example: 'en_GB',
        description: 'Required when type is template; of the form ll_CC',
      }),
      ValidateIf(isTemplate),
      IsDefined({ message: 'templateLanguage is required for template messages' }),
      Matches(LANGUAGE_CODE, { message: 'templateLanguage must be of the form ll_CC (e.g. en_GB)' }),
    ]),
    components: stacked([
      ApiPropertyOptional({
        type: [TemplateComponentDto],
        description: "Template parameters in Meta's component format",
      }),
      ValidateIf((m: { type?: string; components?: unknown }) => isTemplate(m) && m.components !== undefined),
      IsArray({ message: 'components must be an array' }),
      ArrayMaxSize(20),
      ValidateNested({ each: true }),
      Type(() => TemplateComponentDto),
    ]),
  },
  required: ['templateName', 'templateLanguage'],
  examples: {
    template: {
      summary: 'Template (any time): header, body and URL button parameters, as the synced template has them',
      value: {
        type: 'template',
        templateName: 'parcel_update',
        templateLanguage: 'en_GB',
        components: [
          { type: 'header', parameters: [{ type: 'text', text: 'ORD-7781' }] },
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Priya' },
              { type: 'text', text: 'ORD-7781' },
            ],
          },
          { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'ORD-7781' }] },
        ],
      },
    },
  },
  window: 'any_time',
  upstream: (request) => ({
    type: 'template',
    template: {
      name: given(request.templateName, 'templateName'),
      language: { code: given(request.templateLanguage, 'templateLanguage') },
      // Validated in Meta's component format (TemplateComponentDto), passed through as given.
      components: request.components as TemplateSend['template']['components'],
    },
  }),
  stored: (request) => ({ components: request.components ?? [] }),
});
