import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { roleRefusal, Roles } from '../../auth/roles.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { ApiEnvelope, ApiErrors, ApiPage } from '../../core/http/openapi.js';
import { PageQueryDto } from '../../core/contract/pagination.js';
import type { Page } from '../../core/rows/page.js';
import {
  MemberView,
  PasswordResetLinkView,
  RemovedMemberView,
  RemoveMemberQuery,
  UpdateMemberDto,
} from './dto/members.dto.js';
import { LAST_OWNER, MEMBER_NOT_FOUND, MembersService, PLATFORM_ADMIN_MANAGED_OUT_OF_BAND } from './members.service.js';

/** Above @Roles, so it replaces the role's 403 in the document: both refusals are this route's. */
const OwnerOnlyNotPlatformAdmin = () =>
  ApiErrors({ 403: `${roleRefusal('owner')}; or: ${PLATFORM_ADMIN_MANAGED_OUT_OF_BAND}` });
const memberId = () => new ParseUUIDPipe({ exceptionFactory: () => new NotFound(MEMBER_NOT_FOUND) });

@ApiTags('console: organization members')
@ConsoleAuth()
@Roles('member')
@ApiErrors({ 401: 'No or expired console session' })
@Controller('organization/members')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Get()
  @ApiOperation({
    operationId: 'listMembers',
    summary: "The organization's operators (email, role, last sign-in), oldest first; removed operators are left out",
  })
  @ApiPage(MemberView)
  @ApiErrors({ 422: 'Field Validation Failed (page, limit 1–100)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: PageQueryDto): Promise<Page<MemberView>> {
    return this.members.list(operator.organizationId, query);
  }

  @OwnerOnlyNotPlatformAdmin()
  @Patch(':id')
  @Roles('owner')
  @ApiOperation({
    operationId: 'changeMemberRole',
    summary: "Change an operator's role (owners only); it applies from the operator's next request",
  })
  @ApiEnvelope(MemberView)
  @ApiErrors({
    404: MEMBER_NOT_FOUND + ' (or not of this organization, or removed)',
    409: LAST_OWNER,
    422: 'Field Validation Failed (role)',
  })
  changeRole(
    @CurrentOperator() operator: ConsoleScope,
    @Param('id', memberId()) id: string,
    @Body() dto: UpdateMemberDto,
  ): Promise<MemberView> {
    return this.members.changeRole(operator, id, dto.role);
  }

  @OwnerOnlyNotPlatformAdmin()
  @Delete(':id')
  @Roles('owner')
  @ApiOperation({
    operationId: 'removeMember',
    summary:
      'Remove an operator from the organization (owners only): every session of it ends at once, and the key pairs it created are revoked (listed in keysRevoked) unless keepKeys=true (then listed in keysKept, still working)',
  })
  @ApiEnvelope(RemovedMemberView, { description: 'The removed operator' })
  @ApiErrors({
    404: MEMBER_NOT_FOUND + ' (or not of this organization, or already removed)',
    409: LAST_OWNER,
    422: 'Field Validation Failed (keepKeys)',
  })
  remove(
    @CurrentOperator() operator: ConsoleScope,
    @Param('id', memberId()) id: string,
    @Query() query: RemoveMemberQuery,
  ): Promise<RemovedMemberView> {
    return this.members.remove(operator, id, { keepKeys: query.keepKeys === 'true' });
  }

  @OwnerOnlyNotPlatformAdmin()
  @Post(':id/password-reset')
  @Roles('owner')
  @HttpCode(201)
  @ApiOperation({
    operationId: 'issuePasswordReset',
    summary:
      'A one-time password-reset link for an operator (owners only), shown once; it expires after PASSWORD_RESET_TTL_SECONDS (24 h) and replaces earlier unused links of that operator',
  })
  @ApiEnvelope(PasswordResetLinkView, { status: 201, description: 'The link, its token shown this once' })
  @ApiErrors({
    404: MEMBER_NOT_FOUND + ' (or not of this organization, or removed)',
    422: 'Field Validation Failed (id: your own password is changed with POST /auth/password)',
  })
  issuePasswordReset(
    @CurrentOperator() operator: ConsoleScope,
    @Param('id', memberId()) id: string,
  ): Promise<PasswordResetLinkView> {
    return this.members.issuePasswordReset(operator, id);
  }
}
