import { ApiProperty } from '@nestjs/swagger';

export class OrganizationView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
}

export class OperatorView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: ['owner', 'member'], description: 'Owners may invite operators' }) role: 'owner' | 'member';
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
