import { ApiProperty } from '@nestjs/swagger';
import { OPERATOR_ROLES, type OperatorRole } from '../../../auth/roles.js';

export class OrganizationView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
}

export class OperatorView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty({
    enum: OPERATOR_ROLES,
    description:
      'owner: everything; admin: business accounts, key pairs, campaigns, blocked users; member: reads and sends (docs/security.md, "Roles")',
  })
  role: OperatorRole;
  @ApiProperty({ type: OrganizationView }) organization: OrganizationView;
  @ApiProperty() createdAt: string;
}

export class SessionView {
  @ApiProperty({ type: OperatorView }) operator: OperatorView;
  @ApiProperty({ description: 'When the session ends if unused (the earlier of idle and absolute expiry)' })
  expiresAt: string;
}

export class LoggedOutView {
  @ApiProperty({ enum: [true] }) loggedOut: true;
}

export class SessionsEndedView {
  @ApiProperty({ example: 2, description: 'How many sessions of the operator this ended' }) sessionsEnded: number;
}

export class SignedOutEverywhereView extends SessionsEndedView {
  @ApiProperty({ enum: [true] }) loggedOut: true;
}
