import type { AccountAudit } from '../../../src/accounts/business-accounts/business-accounts.ports.js';
import type { AuditAction } from '../../../src/audit/audit.service.js';
import type { ConsoleScope } from '../../../src/auth/request-scope.js';
import type { OperatorAudit } from '../../../src/console/operators/operators.ports.js';
import type { JsonValue } from '../../../src/core/db/database.js';
import type { MemoryAuditEntry, MemoryDatabase } from './memory-database.js';

/**
 * The audit log (AuditService over audit_logs), in memory: each entry appended to the MemoryDatabase's table, so an
 * entry recorded inside a unit of work that fails is gone with it, as in PostgreSQL. Details are JSON values already
 * (what jsonb stores of them is themselves).
 */
export class MemoryAudit implements AccountAudit, OperatorAudit {
  constructor(private readonly db: MemoryDatabase) {}

  /** The organization's entries, oldest first. */
  of(organizationId: string): MemoryAuditEntry[] {
    return this.db.state.console.auditLogs.filter((e) => e.organizationId === organizationId);
  }

  /** The organization's entries as (action, target id) pairs, oldest first. */
  actions(organizationId: string): [string, string][] {
    return this.of(organizationId).map((e) => [e.action, e.targetId]);
  }

  record(
    operator: ConsoleScope,
    action: AuditAction,
    target: { type: string; id: string },
    details?: JsonValue,
  ): Promise<void> {
    this.append(operator.organizationId, operator.operatorId, operator.email, action, target, details);
    return Promise.resolve();
  }

  recordForOrganization(
    organizationId: string,
    action: AuditAction,
    target: { type: string; id: string },
    details?: JsonValue,
  ): Promise<void> {
    this.append(organizationId, null, null, action, target, details);
    return Promise.resolve();
  }

  private append(
    organizationId: string,
    operatorId: string | null,
    operatorEmail: string | null,
    action: AuditAction,
    target: { type: string; id: string },
    details: JsonValue | undefined,
  ): void {
    this.db.autocommit('audit_logs.append').console.auditLogs.push({
      organizationId,
      operatorId,
      operatorEmail,
      action,
      targetType: target.type,
      targetId: target.id,
      details: details === undefined ? null : structuredClone(details),
    });
  }
}
