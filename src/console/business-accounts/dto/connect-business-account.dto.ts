import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { trimString } from '../../../core/contract/validation.js';

export const WABA_ID_PATTERN = /^\d{5,32}$/;

export class ConnectBusinessAccountDto {
  @ApiProperty({ example: '310000000000001', description: 'WhatsApp Business Account id (digits)' })
  @IsString({ message: 'wabaId must be a string' })
  @Matches(WABA_ID_PATTERN, { message: 'wabaId must be the numeric WhatsApp Business Account id' })
  wabaId: string;

  @ApiProperty({ description: 'System-user access token of the business account; stored encrypted, never shown again' })
  @IsString({ message: 'accessToken must be a string' })
  @IsNotEmpty({ message: 'accessToken must not be empty' })
  @MaxLength(2048)
  accessToken: string;

  @ApiPropertyOptional({ description: 'Display name; defaults to the name the upstream platform reports' })
  @IsOptional()
  @Transform(trimString)
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(200)
  name?: string;
}

export class ReplaceAccessTokenDto {
  @ApiProperty({
    description: 'A new system-user access token; checked against the upstream platform, stored encrypted',
  })
  @IsString({ message: 'accessToken must be a string' })
  @IsNotEmpty({ message: 'accessToken must not be empty' })
  @MaxLength(2048)
  accessToken: string;
}
