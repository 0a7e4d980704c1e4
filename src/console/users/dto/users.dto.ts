import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { PageQueryDto } from '../../../core/contract/pagination.js';
import { BSUID, E164_DIGITS } from '../../../messages/dto/send-message.dto.js';

/** A user as Meta's block_users takes it: a phone number (E.164 digits) or a business-scoped user id. */
export const USER_ADDRESS = new RegExp(`${E164_DIGITS.source}|${BSUID.source}`);
const USER_MESSAGE = 'must be phone numbers (E.164 digits, no plus sign) or business-scoped user ids (CC.<id>)';

export class BlockUsersDto {
  @ApiProperty({
    type: [String],
    example: ['16505551234', 'US.13491208655302741918'],
    description: 'Phone numbers (E.164 digits) or business-scoped user ids; 1 to 100',
  })
  @IsDefined({ message: 'users is required' })
  @IsArray({ message: 'users must be an array' })
  @ArrayMinSize(1, { message: 'users must list at least one user' })
  @ArrayMaxSize(100, { message: 'users must list at most 100 users' })
  @IsString({ each: true, message: `users ${USER_MESSAGE}` })
  @Matches(USER_ADDRESS, { each: true, message: `users ${USER_MESSAGE}` })
  users: string[];
}

/** The path of DELETE …/blocked-users/{user}: the user is checked, the account and number are looked up. */
export class BlockedUserParams {
  @IsString() wabaId: string;
  @IsString() phoneNumberId: string;

  @ApiProperty({
    example: '16505551234',
    description: 'The user as blocked (or its wa_id): phone number or business-scoped user id',
  })
  @Matches(USER_ADDRESS, {
    message: `user ${USER_MESSAGE.replace('must be phone numbers', 'must be a phone number').replace('user ids', 'user id')}`,
  })
  user: string;
}

export class ListMarketingPreferencesQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['stop', 'resume'] })
  @IsOptional()
  @IsIn(['stop', 'resume'], { message: 'value must be stop or resume' })
  value?: string;

  @ApiPropertyOptional({ description: 'One user: phone number or business-scoped user id' })
  @IsOptional()
  @Matches(USER_ADDRESS, {
    message: 'user must be a phone number (E.164 digits) or a business-scoped user id (CC.<id>)',
  })
  user?: string;
}
