import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope } from '../../core/http/openapi.js';
import type { Request, Response } from 'express';
import { ConsoleAuth, Public, SameOriginOnly, SESSION_COOKIE } from '../../auth/auth.decorators.js';
import { clearSessionCookie, setSessionCookie } from '../../auth/cookies.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { SessionsService } from '../../auth/sessions/sessions.service.js';
import { Roles } from '../../auth/roles.js';
import { AppConfig } from '../../core/config/app-config.js';
import { clientAddress } from '../../core/http/client-address.js';
import { ChangePasswordDto, LoginDto, ResetPasswordDto, SignupDto } from './dto/signup.dto.js';
import {
  LoggedOutView,
  OperatorView,
  SessionsEndedView,
  SessionView,
  SignedOutEverywhereView,
} from './dto/operator.response.js';
import { OperatorsService } from './operators.service.js';

@ApiTags('console: auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly operators: OperatorsService,
    private readonly sessions: SessionsService,
    private readonly config: AppConfig,
  ) {}

  @Post('signup')
  @Public()
  @SameOriginOnly()
  @ApiOperation({
    operationId: 'signup',
    summary:
      "Create an organization and its first operator (its owner), or with `inviteToken` join the inviting organization with the invitation's role. SIGNUP_MODE: open (both), invite (only with inviteToken), closed (neither).",
  })
  @ApiEnvelope(OperatorView, { status: 201, description: 'The new operator and its organization' })
  @ApiResponse({
    status: 403,
    description: 'Signup is by invitation only (SIGNUP_MODE=invite, no inviteToken), or closed',
  })
  @ApiResponse({ status: 409, description: 'Email already registered' })
  @ApiResponse({
    status: 422,
    description:
      'Field Validation Failed (email, password ≥ 10 characters, organizationName; inviteToken unknown, used, revoked or expired; email not the invited one)',
  })
  @ApiResponse({
    status: 429,
    description:
      'Too many signups from this address (SIGNUP_MAX_PER_ADDRESS per SIGNUP_WINDOW_SECONDS); see Retry-After',
  })
  signup(@Body() dto: SignupDto, @Req() req: Request): Promise<OperatorView> {
    return this.operators.signup(dto, clientAddress(req));
  }

  @Post('login')
  @HttpCode(200)
  @Public()
  @SameOriginOnly()
  @ApiOperation({
    operationId: 'login',
    summary: `Log in; sets the HttpOnly session cookie \`${SESSION_COOKIE}\` (\`__Host-${SESSION_COOKIE}\`, always Secure, in production; Max-Age = the idle lifetime)`,
  })
  @ApiEnvelope(SessionView, { description: 'Signed in: the session cookie is set' })
  @ApiResponse({ status: 401, description: 'Invalid email or password (same answer for both)' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (email, password)' })
  @ApiResponse({
    status: 429,
    description:
      'Too many failed attempts for this email from this address, for this email overall, or from this address; see Retry-After',
  })
  async login(
    @Body() dto: LoginDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SessionView> {
    const { operator, session } = await this.operators.login(dto, clientAddress(req));
    setSessionCookie(req, res, this.config, session.token);
    return { operator, expiresAt: session.expiresAt.toISOString() };
  }

  @Post('logout')
  @HttpCode(200)
  @ConsoleAuth()
  @Roles('member')
  @ApiOperation({ operationId: 'logout', summary: 'Revoke the current session' })
  @ApiEnvelope(LoggedOutView)
  @ApiResponse({ status: 401, description: 'No or expired console session' })
  async logout(
    @CurrentOperator() operator: ConsoleScope,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<LoggedOutView> {
    await this.sessions.revoke(operator.sessionId);
    clearSessionCookie(req, res, this.config);
    return { loggedOut: true };
  }

  @Post('password')
  @HttpCode(200)
  @ConsoleAuth()
  @Roles('member')
  @ApiOperation({
    operationId: 'changePassword',
    summary:
      "Change the signed-in operator's password; every other session of the operator ends at once (this one stays signed in)",
  })
  @ApiEnvelope(SessionsEndedView)
  @ApiResponse({ status: 401, description: 'No or expired console session' })
  @ApiResponse({
    status: 422,
    description:
      'Field Validation Failed (currentPassword not the current password, newPassword ≥ 10 characters and not the current one)',
  })
  @ApiResponse({
    status: 429,
    description: 'Too many wrong current passwords (counted like failed logins); see Retry-After',
  })
  changePassword(
    @CurrentOperator() operator: ConsoleScope,
    @Body() dto: ChangePasswordDto,
    @Req() req: Request,
  ): Promise<SessionsEndedView> {
    return this.operators.changePassword(operator, dto.currentPassword, dto.newPassword, clientAddress(req));
  }

  @Post('password-reset')
  @HttpCode(200)
  @Public()
  @SameOriginOnly()
  @ApiOperation({
    operationId: 'resetPassword',
    summary:
      'Set a new password with a one-time password-reset link an owner issued (POST /organization/members/{id}/password-reset); every session of the operator ends',
  })
  @ApiEnvelope(SessionsEndedView)
  @ApiResponse({
    status: 422,
    description: 'Field Validation Failed (token unknown, used, revoked or expired; newPassword ≥ 10 characters)',
  })
  @ApiResponse({ status: 429, description: 'Too many requests from this address; see Retry-After' })
  resetPassword(@Body() dto: ResetPasswordDto): Promise<SessionsEndedView> {
    return this.operators.resetPassword(dto.token, dto.newPassword);
  }

  @Post('logout-everywhere')
  @HttpCode(200)
  @ConsoleAuth()
  @Roles('member')
  @ApiOperation({
    operationId: 'logoutEverywhere',
    summary: 'Sign out everywhere: every session of the signed-in operator ends, this one included',
  })
  @ApiEnvelope(SignedOutEverywhereView)
  @ApiResponse({ status: 401, description: 'No or expired console session' })
  async logoutEverywhere(
    @CurrentOperator() operator: ConsoleScope,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SignedOutEverywhereView> {
    const { sessionsEnded } = await this.operators.signOutEverywhere(operator);
    clearSessionCookie(req, res, this.config);
    return { loggedOut: true, sessionsEnded };
  }

  @Get('me')
  @ConsoleAuth()
  @Roles('member')
  @ApiOperation({ operationId: 'getSession', summary: 'The signed-in operator and the session expiry' })
  @ApiEnvelope(SessionView)
  @ApiResponse({ status: 401, description: 'No or expired console session' })
  async me(@CurrentOperator() operator: ConsoleScope): Promise<SessionView> {
    const expiresAt = await this.sessions.expiryOf(operator.sessionId);
    return {
      operator: await this.operators.me(operator.operatorId),
      expiresAt: (expiresAt ?? new Date()).toISOString(),
    };
  }
}
