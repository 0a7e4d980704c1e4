import { Injectable } from '@nestjs/common';
import type { Message } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { statement } from '../../core/prisma/sql.js';

/** What the pre-send checks need, read in one statement (missing rows read as nulls). */
export interface SendContext {
  numberExists: boolean;
  numberStatus: string | null;
  numberRemovedAt: Date | null;
  templateExists: boolean;
  templateStatus: string | null;
  templateRemovedAt: Date | null;
  parameterCounts: unknown;
  parameterFormat: string | null;
  lastInboundAt: Date | null;
}

const sendContext = statement(
  'send_context',
  `SELECT p.id IS NOT NULL AS "numberExists", p.status AS "numberStatus", p.removed_at AS "numberRemovedAt",
          t.id IS NOT NULL AS "templateExists", t.status AS "templateStatus", t.removed_at AS "templateRemovedAt",
          t.parameter_counts AS "parameterCounts", t.parameter_format AS "parameterFormat",
          w.last_inbound_at AS "lastInboundAt"
     FROM (VALUES (1)) AS one (x)
     LEFT JOIN phone_numbers p ON p.business_account_id = $1::uuid AND p.phone_number_id = $2
     LEFT JOIN templates t ON t.business_account_id = $1::uuid AND t.name = $3 AND t.language = $4
     LEFT JOIN conversation_windows w ON w.phone_number_id = $2 AND w.recipient = $5`,
);

const MESSAGE_COLUMNS = `id, business_account_id AS "businessAccountId", api_key_id AS "apiKeyId", phone_number_id AS "phoneNumberId",
  "to", type, template_name AS "templateName", template_language AS "templateLanguage", content, status,
  upstream_message_id AS "upstreamMessageId", error_code AS "errorCode", error_title AS "errorTitle",
  error_detail AS "errorDetail", error_category AS "errorCategory", accepted_at AS "acceptedAt", sent_at AS "sentAt",
  delivered_at AS "deliveredAt", read_at AS "readAt", failed_at AS "failedAt", created_at AS "createdAt",
  updated_at AS "updatedAt"`;

const insertPending = statement(
  'insert_pending_message',
  `INSERT INTO messages (business_account_id, api_key_id, phone_number_id, "to", type, template_name, template_language,
                         content, status, updated_at)
   VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8::jsonb, 'pending', now())
   RETURNING ${MESSAGE_COLUMNS}`,
);

const markSent = statement(
  'mark_message_sent',
  `UPDATE messages SET status = 'sent', upstream_message_id = $2, accepted_at = $3, sent_at = $3, updated_at = $3
    WHERE id = $1 AND status = 'pending'`,
);

export type PendingMessage = Pick<Message, 'businessAccountId' | 'apiKeyId' | 'phoneNumberId' | 'to' | 'type' | 'templateName' | 'templateLanguage'> & {
  content: unknown;
};

/**
 * The statements of every send, on node-postgres (the send path's hot statements; the rarer ones stay on
 * Prisma). Tenant scope: the business account is an argument of each.
 */
@Injectable()
export class SendStore {
  constructor(private readonly prisma: PrismaService) {}

  async context(businessAccountId: string, q: { phoneNumberId: string; templateName: string | null; templateLanguage: string | null; to: string | null }): Promise<SendContext> {
    const { rows } = await this.prisma.pool.query<SendContext>(sendContext([businessAccountId, q.phoneNumberId, q.templateName, q.templateLanguage, q.to]));
    return rows[0]!;
  }

  async insertPending(m: PendingMessage): Promise<Message> {
    const values = [m.businessAccountId, m.apiKeyId, m.phoneNumberId, m.to, m.type, m.templateName, m.templateLanguage, JSON.stringify(m.content)];
    const { rows } = await this.prisma.pool.query<Message>(insertPending(values));
    return rows[0]!;
  }

  /** pending → sent with the wamid, in one write; false when something else moved the message first. */
  async markSent(messageId: number, wamid: string, at: Date): Promise<boolean> {
    const { rowCount } = await this.prisma.pool.query(markSent([messageId, wamid, at]));
    return rowCount === 1;
  }
}
