import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsIn, MaxLength, ValidateIf } from 'class-validator';
import { OPERATOR_ROLES, type OperatorRole } from '../../../auth/roles.js';
import { normaliseEmail } from '../../../core/contract/validation.js';

const EMAIL_MESSAGE = 'email must be a valid email address';

export class CreateInvitationDto {
  @ApiProperty({ example: 'colleague@parcel.example', description: 'Only this email can accept the invitation' })
  @Transform(normaliseEmail)
  @IsEmail({}, { message: EMAIL_MESSAGE })
  @MaxLength(254, { message: `${EMAIL_MESSAGE} of at most 254 characters` })
  email: string;

  @ApiPropertyOptional({
    enum: OPERATOR_ROLES,
    description:
      'member when absent; owner: everything, operators and invitations included; admin: business accounts, key pairs, campaigns, blocked users; member: reads and sends (docs/security.md, "Roles")',
  })
  @ValidateIf((dto: CreateInvitationDto) => dto.role !== undefined)
  @IsIn(OPERATOR_ROLES, { message: `role must be one of ${OPERATOR_ROLES.join(', ')}` })
  role?: OperatorRole;
}

export class InvitationView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: OPERATOR_ROLES }) role: OperatorRole;
  @ApiProperty({ description: 'Email of the owner who invited' }) invitedBy: string;
  @ApiProperty() expiresAt: string;
  @ApiProperty() createdAt: string;
}

export class CreatedInvitationView extends InvitationView {
  @ApiProperty({ description: 'The one-time token. Shown only in this response (the service keeps its SHA-256).' })
  token: string;

  @ApiProperty({
    example: '/console/signup?invite=…',
    description: "The invitation link's path on this service; send the full link to the invitee",
  })
  path: string;
}
