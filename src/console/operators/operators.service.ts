import { Injectable } from '@nestjs/common';
import { Prisma } from '../../generated/prisma/client.js';
import { ApiError } from '../../core/http/api-error.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { SessionsService, type IssuedSession } from '../../auth/sessions/sessions.service.js';
import type { LoginDto, SignupDto } from './dto/signup.dto.js';
import type { OperatorView } from './dto/operator.response.js';
import { LoginThrottle } from './login-throttle.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from './password-hasher.js';

export const INVALID_CREDENTIALS = 'Invalid email or password';

@Injectable()
export class OperatorsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly sessions: SessionsService,
    private readonly throttle: LoginThrottle,
  ) {}

  /** Creates an organization and its first operator. */
  async signup(dto: SignupDto): Promise<OperatorView> {
    const passwordHash = await hashPassword(dto.password);
    try {
      const operator = await this.prisma.operator.create({
        data: { email: dto.email, passwordHash, organization: { create: { name: dto.organizationName.trim() } } },
        include: { organization: true },
      });
      return toView(operator);
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
        throw new ApiError(409, 'An operator with this email already exists', { errors: [{ field: 'email', message: 'email is already registered' }] });
      }
      throw error;
    }
  }

  async login(dto: LoginDto, ip: string): Promise<{ operator: OperatorView; session: IssuedSession }> {
    await this.throttle.assertAllowed(dto.email, ip);
    const operator = await this.prisma.operator.findUnique({ where: { email: dto.email }, include: { organization: true } });
    const valid = await verifyPassword(dto.password, operator?.passwordHash ?? DUMMY_HASH);
    if (!operator || !valid) {
      await this.throttle.recordFailure(dto.email, ip);
      throw new ApiError(401, INVALID_CREDENTIALS);
    }
    await this.throttle.reset(dto.email);
    return { operator: toView(operator), session: await this.sessions.issue(operator.id) };
  }

  async me(operatorId: string): Promise<OperatorView> {
    const operator = await this.prisma.operator.findUniqueOrThrow({ where: { id: operatorId }, include: { organization: true } });
    return toView(operator);
  }
}

function toView(operator: { id: string; email: string; createdAt: Date; organization: { id: string; name: string } }): OperatorView {
  return {
    id: operator.id,
    email: operator.email,
    organization: { id: operator.organization.id, name: operator.organization.name },
    createdAt: operator.createdAt.toISOString(),
  };
}
