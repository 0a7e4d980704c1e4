import { Injectable } from '@nestjs/common';
import { Conflict, NotFound, Unauthenticated } from '../../core/errors/domain-errors.js';
import { UnitOfWork } from '../../core/prisma/unit-of-work.js';
import { SessionsService, type IssuedSession } from '../../auth/sessions/sessions.service.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import type { LoginDto, SignupDto } from './dto/signup.dto.js';
import type { OperatorView } from './dto/operator.response.js';
import { LoginThrottle } from './login-throttle.js';
import { OperatorsRepository, type OperatorWithOrganization } from './operators.repository.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from './password-hasher.js';

export const INVALID_CREDENTIALS = 'Invalid email or password';

@Injectable()
export class OperatorsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly organizations: OrganizationsRepository,
    private readonly operators: OperatorsRepository,
    private readonly sessions: SessionsService,
    private readonly throttle: LoginThrottle,
  ) {}

  /** Creates an organization and its first operator, both or neither. */
  async signup(dto: SignupDto): Promise<OperatorView> {
    const passwordHash = await hashPassword(dto.password);
    const operator = await this.uow.run(async () => {
      const organization = await this.organizations.create(dto.organizationName.trim());
      const created = await this.operators.create(organization.id, { email: dto.email, passwordHash });
      if (!created) throw new Conflict('An operator with this email already exists', [{ field: 'email', message: 'email is already registered' }]);
      return created;
    });
    return toView(operator);
  }

  async login(dto: LoginDto, ip: string): Promise<{ operator: OperatorView; session: IssuedSession }> {
    await this.throttle.assertAllowed(dto.email, ip);
    const operator = await this.operators.findByEmail(dto.email);
    const valid = await verifyPassword(dto.password, operator?.passwordHash ?? DUMMY_HASH);
    if (!operator || !valid) {
      await this.throttle.recordFailure(dto.email, ip);
      throw new Unauthenticated(INVALID_CREDENTIALS);
    }
    await this.throttle.reset(dto.email);
    return { operator: toView(operator), session: await this.sessions.issue(operator.id) };
  }

  async me(operatorId: string): Promise<OperatorView> {
    const operator = await this.operators.findById(operatorId);
    if (!operator) throw new NotFound('Operator not found');
    return toView(operator);
  }
}

function toView(operator: OperatorWithOrganization): OperatorView {
  return {
    id: operator.id,
    email: operator.email,
    organization: { id: operator.organization.id, name: operator.organization.name },
    createdAt: operator.createdAt.toISOString(),
  };
}
