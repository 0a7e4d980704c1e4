import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsNotEmpty, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { normaliseEmail, trimString } from '../../../core/contract/validation.js';

// MaxLength carries the IsEmail wording: class-validator reports it first when email is missing or not a string.
const EMAIL_MESSAGE = 'email must be a valid email address';

export class SignupDto {
  @ApiProperty({ example: 'ops@parcel.example' })
  @Transform(normaliseEmail)
  @IsEmail({}, { message: EMAIL_MESSAGE })
  @MaxLength(254, { message: `${EMAIL_MESSAGE} of at most 254 characters` })
  email: string;

  @ApiProperty({ minLength: 10, maxLength: 200, example: 'correct horse battery' })
  @IsString()
  @MinLength(10, { message: 'password must be at least 10 characters' })
  @MaxLength(200)
  password: string;

  @ApiPropertyOptional({
    example: 'Parcel Co',
    description: 'The new organization (required without inviteToken; ignored with one)',
  })
  @ValidateIf((dto: SignupDto) => dto.inviteToken === undefined)
  @Transform(trimString)
  @IsString()
  @IsNotEmpty({ message: 'organizationName must not be empty' })
  @MaxLength(200)
  organizationName?: string;

  @ApiPropertyOptional({
    description:
      'The token of an invitation link (`/console/signup?invite=…`): join the inviting organization with its role. The email must be the invited one.',
  })
  // Absent is fine; null is not (IsOptional would let it through as if absent).
  @ValidateIf((dto: SignupDto) => dto.inviteToken !== undefined)
  @IsString()
  @IsNotEmpty({ message: 'inviteToken must not be empty' })
  @MaxLength(200)
  inviteToken?: string;
}

export class LoginDto {
  @ApiProperty({ example: 'ops@parcel.example' })
  @Transform(normaliseEmail)
  @IsEmail({}, { message: EMAIL_MESSAGE })
  @MaxLength(254, { message: `${EMAIL_MESSAGE} of at most 254 characters` })
  email: string;

  @ApiProperty()
  @IsString()
  @IsNotEmpty({ message: 'password must not be empty' })
  @MaxLength(200)
  password: string;
}

/** `newPassword` of a change or a reset: 10 to 200 characters. */
export const NewPassword = (example: string) =>
  applyDecorators(
    ApiProperty({ minLength: 10, maxLength: 200, example }),
    IsString(),
    MinLength(10, { message: 'newPassword must be at least 10 characters' }),
    MaxLength(200),
  );

export class ChangePasswordDto {
  @ApiProperty({ description: 'The password the operator signs in with now' })
  @IsString()
  @IsNotEmpty({ message: 'currentPassword must not be empty' })
  @MaxLength(200)
  currentPassword: string;

  @NewPassword('a longer passphrase than before')
  newPassword: string;
}

export class ResetPasswordDto {
  @ApiProperty({ description: 'The token of the password-reset link' })
  @IsString()
  @IsNotEmpty({ message: 'token must not be empty' })
  @MaxLength(200)
  token: string;

  @NewPassword('a passphrase of my own')
  newPassword: string;
}
