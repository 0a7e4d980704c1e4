import { Body, Controller, Delete, Get, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope } from '../../core/http/openapi.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { INVITING_ROLE } from './signup-mode.js';
import { CreatedInvitationView, CreateInvitationDto, InvitationView } from './dto/invitation.dto.js';
import { INVITATION_NOT_FOUND, InvitationsService, OWNERS_ONLY } from './invitations.service.js';

@ApiTags('console: invitations')
@ConsoleAuth()
@Roles(INVITING_ROLE, OWNERS_ONLY)
@ApiResponse({ status: 401, description: 'No or expired console session' })
@Controller('invitations')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createInvitation',
    summary:
      'Invite an operator into this organization (owners only). The one-time token and link are shown once; they expire after INVITATION_TTL_SECONDS (7 days).',
  })
  @ApiEnvelope(CreatedInvitationView, {
    status: 201,
    description: 'The invitation with its one-time token and link path, shown this once',
  })
  @ApiResponse({
    status: 409,
    description:
      'INVITATIONS_MAX_PENDING invitations already pending, or one for this email already is: revoke it first (an already registered email is not refused here: the answer tells nothing about it)',
  })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (email, role)' })
  create(@CurrentOperator() operator: ConsoleScope, @Body() dto: CreateInvitationDto): Promise<CreatedInvitationView> {
    return this.invitations.create(operator, dto.email, dto.role ?? 'member');
  }

  @Get()
  @ApiOperation({
    operationId: 'listInvitations',
    summary: 'Pending invitations of this organization (not used, revoked or expired), newest first; never the token',
  })
  @ApiEnvelope(InvitationView, { isArray: true })
  list(@CurrentOperator() operator: ConsoleScope): Promise<InvitationView[]> {
    return this.invitations.listPending(operator);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'revokeInvitation', summary: 'Revoke an invitation: its link stops working' })
  @ApiEnvelope(InvitationView, { description: 'The revoked invitation' })
  @ApiResponse({ status: 404, description: 'Invitation not found (or not of this organization)' })
  revoke(
    @CurrentOperator() operator: ConsoleScope,
    @Param('id', new ParseUUIDPipe({ exceptionFactory: () => new NotFound(INVITATION_NOT_FOUND) })) id: string,
  ): Promise<InvitationView> {
    return this.invitations.revoke(operator, id);
  }
}
