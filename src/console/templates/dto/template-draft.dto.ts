import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
} from 'class-validator';
import {
  PARAMETER_FORMATS,
  TEMPLATE_CATEGORIES,
  TEMPLATE_LANGUAGE,
  TEMPLATE_NAME,
  type ParameterFormat,
} from '../../../accounts/templates/template-definition.js';
import type { TemplateChange, TemplateDraft } from '../../../accounts/templates/templates.service.js';

const COMPONENTS_EXAMPLE = [
  { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['ORD-7781'] } },
  {
    type: 'BODY',
    text: 'Hi {{1}}, your order {{2}} is ready for collection.',
    example: { body_text: [['Priya', 'ORD-7781']] },
  },
  { type: 'FOOTER', text: 'Parcel Co' },
  { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Thanks' }] },
];

const COMPONENTS_DESCRIPTION =
  "Meta's component objects (HEADER, BODY, FOOTER, BUTTONS), as Meta takes them. A BODY with text is required; every " +
  'variable needs an example (`example.body_text: [["…"]]`, `header_text: ["…"]`; NAMED: `body_text_named_params: ' +
  '[{param_name, example}]`). Checked before Meta: 422 naming the field, e.g. `components.1.example.body_text`.';

/** `POST /business-accounts/{wabaId}/templates`. */
export class CreateTemplateDto implements TemplateDraft {
  @ApiProperty({ example: 'order_ready', maxLength: 512, description: 'Lowercase letters, digits and underscores' })
  @IsString({ message: 'name must be a string' })
  @Length(1, 512, { message: 'name must be 1 to 512 characters' })
  @Matches(TEMPLATE_NAME, { message: 'name may only contain lowercase letters, digits and underscores' })
  name!: string;

  @ApiProperty({ example: 'en_GB', description: "Meta's language code (en, en_GB, pt_BR, …)" })
  @IsString({ message: 'language must be a string' })
  @Matches(TEMPLATE_LANGUAGE, { message: 'language must be a language code such as en, en_GB or pt_BR' })
  language!: string;

  @ApiProperty({ enum: TEMPLATE_CATEGORIES, example: 'UTILITY' })
  @IsIn(TEMPLATE_CATEGORIES, { message: `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}` })
  category!: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: COMPONENTS_EXAMPLE,
    description: COMPONENTS_DESCRIPTION,
  })
  @IsArray({ message: 'components must be an array' })
  @ArrayMinSize(1, { message: 'components must have 1 to 4 components (a BODY at least)' })
  @ArrayMaxSize(4, { message: 'components must have at most 4 components' })
  @IsObject({ each: true, message: 'each component must be an object' })
  components!: object[];

  @ApiPropertyOptional({
    enum: PARAMETER_FORMATS,
    description: 'POSITIONAL ({{1}}, {{2}}) when absent, or NAMED ({{first_name}})',
  })
  @IsOptional()
  @IsIn(PARAMETER_FORMATS, { message: `parameterFormat must be one of ${PARAMETER_FORMATS.join(', ')}` })
  parameterFormat?: ParameterFormat;
}

/** `PATCH /business-accounts/{wabaId}/templates/{id}`: at least one of the two. */
export class EditTemplateDto implements TemplateChange {
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: COMPONENTS_EXAMPLE,
    description: `The new components (all of them). ${COMPONENTS_DESCRIPTION}`,
  })
  @IsOptional()
  @IsArray({ message: 'components must be an array' })
  @ArrayMinSize(1, { message: 'components must have 1 to 4 components (a BODY at least)' })
  @ArrayMaxSize(4, { message: 'components must have at most 4 components' })
  @IsObject({ each: true, message: 'each component must be an object' })
  components?: object[];

  @ApiPropertyOptional({ enum: TEMPLATE_CATEGORIES, example: 'MARKETING' })
  @IsOptional()
  @IsIn(TEMPLATE_CATEGORIES, { message: `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}` })
  category?: string;
}
