import { Injectable } from '@nestjs/common';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { skipTake, toPage, type Page } from '../../core/http/pagination.js';

export type AuditAction =
  | 'business_account.connected'
  | 'business_account.reconnected'
  | 'business_account.disconnected'
  | 'phone_numbers.synced'
  | 'templates.synced'
  | 'api_key.created'
  | 'api_key.revoked';

export interface AuditEntry {
  id: number;
  action: string;
  targetType: string;
  targetId: string;
  operatorId: string | null;
  operatorEmail: string | null;
  details: unknown;
  createdAt: string;
}

type Tx = Prisma.TransactionClient;

/** Who did what, when: written in the same transaction as the change it records. */
@Injectable()
export class AuditService {
  constructor(private readonly prisma: PrismaService) {}

  async record(tx: Tx, operator: ConsoleScope, action: AuditAction, target: { type: string; id: string }, details?: Prisma.InputJsonValue): Promise<void> {
    await tx.auditLog.create({
      data: {
        organizationId: operator.organizationId,
        operatorId: operator.operatorId,
        operatorEmail: operator.email,
        action,
        targetType: target.type,
        targetId: target.id,
        details,
      },
    });
  }

  async list(organizationId: string, query: { page: number; limit: number }): Promise<Page<AuditEntry>> {
    const where = { organizationId };
    const [rows, total] = await Promise.all([
      this.prisma.auditLog.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(query) }),
      this.prisma.auditLog.count({ where }),
    ]);
    return toPage(
      rows.map((r) => ({
        id: r.id,
        action: r.action,
        targetType: r.targetType,
        targetId: r.targetId,
        operatorId: r.operatorId,
        operatorEmail: r.operatorEmail,
        details: r.details,
        createdAt: r.createdAt.toISOString(),
      })),
      total,
      query,
    );
  }
}
