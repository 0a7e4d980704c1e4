import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsNotEmpty, IsString, MaxLength, MinLength } from 'class-validator';
import { trimString } from '../../../core/http/validation.js';

export const normaliseEmail = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value);

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

  @ApiProperty({ example: 'Parcel Co' })
  @Transform(trimString)
  @IsString()
  @IsNotEmpty({ message: 'organizationName must not be empty' })
  @MaxLength(200)
  organizationName: string;
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
