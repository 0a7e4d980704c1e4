import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { OPERATOR_ROLES, type OperatorRole } from '../../../auth/roles.js';

const ROLES_DESCRIPTION =
  'owner: everything; admin: business accounts, key pairs, campaigns, blocked users; member: reads and sends (docs/security.md, "Roles")';

export class MemberView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: OPERATOR_ROLES, description: ROLES_DESCRIPTION }) role: OperatorRole;
  @ApiProperty({ nullable: true, type: String, description: 'The last successful sign-in; null when never signed in' })
  lastSignInAt: string | null;
  @ApiProperty() createdAt: string;
}

export class MemberKeyView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'production backend' }) name: string;
}

export class RemovedMemberView extends MemberView {
  @ApiProperty() removedAt: string;
  @ApiProperty({ example: 2, description: 'How many sessions of the operator this ended' }) sessionsEnded: number;
  @ApiProperty({
    type: [MemberKeyView],
    description: 'The active key pairs the operator created, revoked by the removal (empty with keepKeys=true)',
  })
  keysRevoked: MemberKeyView[];
  @ApiProperty({
    type: [MemberKeyView],
    description:
      'With keepKeys=true: the active key pairs the operator created, still working (revoke them with DELETE /api-keys/{id} once the backends using them have new ones)',
  })
  keysKept: MemberKeyView[];
}

export class RemoveMemberQuery {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description:
      'true: the key pairs the operator created keep working (they are listed in keysKept); by default they are revoked with the removal',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'keepKeys must be true or false' })
  keepKeys?: 'true' | 'false';
}

export class UpdateMemberDto {
  @ApiProperty({ enum: OPERATOR_ROLES, description: ROLES_DESCRIPTION })
  @IsIn(OPERATOR_ROLES, { message: `role must be one of ${OPERATOR_ROLES.join(', ')}` })
  role: OperatorRole;
}

export class PasswordResetLinkView {
  @ApiProperty({ format: 'uuid', description: 'The operator whose password the link resets' }) operatorId: string;
  @ApiProperty({ description: 'The one-time token, shown in this response only' }) token: string;
  @ApiProperty({
    example: '/console/reset-password?token=…',
    description: 'The link path to hand to the operator (POST /auth/password-reset with the token)',
  })
  path: string;
  @ApiProperty() expiresAt: string;
}
