import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsObject,
  IsOptional,
  IsString,
  Length,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { defineMessageType, given, stacked } from './message-type.js';

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

const previewOf = (text: TextContentDto) => text.previewUrl ?? text.preview_url ?? false;

/** Plain text, up to 4096 characters, with an optional link preview (24 h window). */
export const text = defineMessageType<'text', { text?: TextContentDto }>({
  type: 'text',
  fields: {
    text: stacked([
      ApiPropertyOptional({
        type: TextContentDto,
        description: 'Required when type is text (only inside the 24 h customer service window)',
      }),
      ValidateIf((m: { type?: string }) => m.type === 'text'),
      IsDefined({ message: 'text is required for text messages' }),
      IsObject({ message: 'text must be an object' }),
      ValidateNested(),
      Type(() => TextContentDto),
    ]),
  },
  examples: {
    text: {
      summary: 'Text (24 h window)',
      value: { type: 'text', text: { body: 'Your parcel is ready for pickup.' } },
    },
  },
  window: 'service_window',
  upstream: (request) => {
    const text = given(request.text, 'text');
    return { type: 'text', text: { body: text.body, preview_url: previewOf(text) } };
  },
  stored: (request) => {
    const text = given(request.text, 'text');
    return { text: { body: text.body, previewUrl: previewOf(text) } };
  },
});
