import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ConsoleAuth, Public, SameOriginOnly, SESSION_COOKIE } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { SessionsService } from '../../auth/sessions/sessions.service.js';
import { AppConfig } from '../../core/config/app-config.js';
import { LoginDto, SignupDto } from './dto/signup.dto.js';
import { OperatorView, SessionView } from './dto/operator.response.js';
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
  @ApiOperation({ summary: 'Create an organization and its first operator' })
  @ApiCreatedResponse({ type: OperatorView })
  @ApiResponse({ status: 409, description: 'Email already registered' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (email, password ≥ 10 characters, organizationName)' })
  signup(@Body() dto: SignupDto): Promise<OperatorView> {
    return this.operators.signup(dto);
  }

  @Post('login')
  @HttpCode(200)
  @Public()
  @SameOriginOnly()
  @ApiOperation({ summary: `Log in; sets the HttpOnly session cookie \`${SESSION_COOKIE}\`` })
  @ApiOkResponse({ type: SessionView })
  @ApiResponse({ status: 401, description: 'Invalid email or password (same answer for both)' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (email, password)' })
  @ApiResponse({ status: 429, description: 'Too many failed attempts; see Retry-After' })
  async login(@Body() dto: LoginDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<SessionView> {
    const { operator, session } = await this.operators.login(dto, req.ip ?? 'unknown');
    res.cookie(SESSION_COOKIE, session.token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: req.secure,
      path: '/',
      maxAge: this.config.sessionAbsoluteTtlSeconds * 1000,
    });
    return { operator, expiresAt: session.expiresAt.toISOString() };
  }

  @Post('logout')
  @HttpCode(200)
  @ConsoleAuth()
  @ApiOperation({ summary: 'Revoke the current session' })
  @ApiOkResponse({ description: '`data: {loggedOut: true}`' })
  @ApiResponse({ status: 401, description: 'No or expired console session' })
  async logout(@CurrentOperator() operator: ConsoleScope, @Res({ passthrough: true }) res: Response): Promise<{ loggedOut: true }> {
    await this.sessions.revoke(operator.sessionId);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    return { loggedOut: true };
  }

  @Get('me')
  @ConsoleAuth()
  @ApiOperation({ summary: 'The signed-in operator and the session expiry' })
  @ApiOkResponse({ type: SessionView })
  @ApiResponse({ status: 401, description: 'No or expired console session' })
  async me(@CurrentOperator() operator: ConsoleScope): Promise<SessionView> {
    const expiresAt = await this.sessions.expiryOf(operator.sessionId);
    return { operator: await this.operators.me(operator.operatorId), expiresAt: (expiresAt ?? new Date()).toISOString() };
  }
}
