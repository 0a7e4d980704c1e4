import { Injectable } from '@nestjs/common';
import type { AuditLog, Prisma } from '../generated/prisma/client.js';
import { skipTake } from '../core/http/pagination.js';
import { PrismaService, withNumberId } from '../core/prisma/prisma.service.js';
import { clientOf } from '../core/prisma/unit-of-work.js';

export interface AuditLogEntry {
  operatorId: string | null;
  operatorEmail: string | null;
  action: string;
  targetType: string;
  targetId: string;
  details?: Prisma.InputJsonValue;
}

/** An audit entry as stored, with its bigint id read as a number (what the console's JSON answers). */
export type StoredAuditLog = Omit<AuditLog, 'id'> & { id: number };

/** Owns `audit_logs`. Writes join the caller's unit of work, so an entry commits with the change it records. */
@Injectable()
export class AuditLogsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async append(organizationId: string, entry: AuditLogEntry): Promise<void> {
    await clientOf(this.prisma).auditLog.create({ data: { organizationId, ...entry } });
  }

  /** Newest first. */
  async page(organizationId: string, query: { page: number; limit: number }): Promise<{ rows: StoredAuditLog[]; total: number }> {
    const where = { organizationId };
    const db = clientOf(this.prisma);
    const [rows, total] = await Promise.all([
      db.auditLog.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(query) }),
      db.auditLog.count({ where }),
    ]);
    return { rows: rows.map(withNumberId), total };
  }
}
