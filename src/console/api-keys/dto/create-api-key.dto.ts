import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../core/contract/pagination.js';
import { trimString } from '../../../core/contract/validation.js';
import { WABA_ID_PATTERN } from '../../business-accounts/dto/connect-business-account.dto.js';

export class CreateApiKeyDto {
  @ApiProperty({ example: '310000000000001', description: 'The one business account this key pair can act on' })
  @IsString({ message: 'wabaId must be a string' })
  @Matches(WABA_ID_PATTERN, { message: 'wabaId must be the numeric WhatsApp Business Account id' })
  wabaId: string;

  @ApiProperty({ example: 'orders-service production' })
  @Transform(trimString)
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(100, { message: 'name must be at most 100 characters' })
  name: string;
}

export class ApiKeyQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only keys of this business account' })
  @IsOptional()
  @Matches(WABA_ID_PATTERN, { message: 'wabaId must be the numeric WhatsApp Business Account id' })
  wabaId?: string;
}
