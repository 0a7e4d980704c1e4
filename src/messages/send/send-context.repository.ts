import { Injectable } from '@nestjs/common';
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

export interface SendContextQuery {
  phoneNumberId: string;
  templateName: string | null;
  templateLanguage: string | null;
  /** The recipient, for the 24 h window (text messages); null for templates. */
  to: string | null;
}

/** LISTEN/NOTIFY channel on which every change to `phone_numbers` or `templates` names its business account. */
export const SEND_CONTEXT_CHANNEL = 'send_context';

/**
 * The pre-send read of `phone_numbers`, `templates` and `conversation_windows`. Seam: these tables belong to
 * the accounts domain (src/accounts/, being built); when it lands, these two reads become methods of its
 * repositories and this class goes. Nothing in src/messages reads those tables elsewhere.
 * The triggers of migration 20261124090000_send_context_notify NOTIFY `send_context` on every change to
 * `phone_numbers` and `templates` (see SendContextCache).
 */
@Injectable()
export class SendContextRepository {
  constructor(private readonly prisma: PrismaService) {}

  async read(businessAccountId: string, q: SendContextQuery): Promise<SendContext> {
    const { rows } = await this.prisma.pool.query<SendContext>(sendContext([businessAccountId, q.phoneNumberId, q.templateName, q.templateLanguage, q.to]));
    return rows[0]!;
  }

  /** The languages a template is synced in (to name the missing translation in a refusal). */
  async languagesOf(businessAccountId: string, templateName: string): Promise<string[]> {
    const rows = await this.prisma.template.findMany({ where: { businessAccountId, name: templateName, removedAt: null }, select: { language: true } });
    return rows.map((t) => t.language);
  }
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
