import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../auth/request-scope.js';
import type { JsonValue } from '../core/db/database.js';
import { toPage, type Page } from '../core/rows/page.js';
import { AuditLogsRepository } from './audit-logs.repository.js';

export type AuditAction =
  | 'business_account.connected'
  | 'business_account.reconnected'
  | 'business_account.disconnected'
  | 'business_account.webhooks_subscribed'
  | 'business_account.credentials_checked'
  | 'phone_numbers.synced'
  | 'blocked_users.blocked'
  | 'blocked_users.unblocked'
  | 'templates.synced'
  | 'template.created'
  | 'template.edited'
  | 'template.deleted'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'invitation.created'
  | 'invitation.revoked'
  | 'invitation.accepted'
  | 'operator.password_changed'
  | 'operator.signed_out_everywhere'
  | 'operator.role_changed'
  | 'operator.removed'
  | 'operator.password_reset_issued'
  | 'operator.password_reset'
  | 'operator.signed_in'
  | 'operator.sign_in_failed'
  | 'media.uploaded'
  | 'media.downloaded'
  | 'webhook_delivery.replayed'
  | 'business_account.taken_over'
  | 'business_account.lost_to_takeover'
  | 'campaign.started'
  | 'campaign.paused'
  | 'campaign.resumed'
  | 'campaign.cancelled'
  | 'campaign.retried'
  | 'contact.exported'
  | 'contact.erased'
  | 'organization.settings_changed'
  | 'content.scrubbed';

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

/** Who did what, when. Call `record` inside the unit of work of the change it records: both commit or neither. */
@Injectable()
export class AuditService {
  constructor(private readonly logs: AuditLogsRepository) {}

  record(
    operator: ConsoleScope,
    action: AuditAction,
    target: { type: string; id: string },
    details?: JsonValue,
  ): Promise<void> {
    return this.logs.append(operator.organizationId, {
      operatorId: operator.operatorId,
      operatorEmail: operator.email,
      action,
      targetType: target.type,
      targetId: target.id,
      details,
    });
  }

  /** An entry of an organization none of whose operators acted (another organization took its business account over). */
  recordForOrganization(
    organizationId: string,
    action: AuditAction,
    target: { type: string; id: string },
    details?: JsonValue,
  ): Promise<void> {
    return this.logs.append(organizationId, {
      operatorId: null,
      operatorEmail: null,
      action,
      targetType: target.type,
      targetId: target.id,
      details,
    });
  }

  /**
   * An erased contact (src/contacts): the organization's entries whose details name one of its addresses get
   * `replacement` (the contact's keyed hash) instead, inside the caller's unit of work. Returns how many changed.
   */
  replaceContact(organizationId: string, addresses: string[], replacement: string): Promise<number> {
    return this.logs.replaceInDetails(organizationId, addresses, replacement);
  }

  async list(organizationId: string, query: { page: number; limit: number }): Promise<Page<AuditEntry>> {
    const { rows, total } = await this.logs.page(organizationId, query);
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
