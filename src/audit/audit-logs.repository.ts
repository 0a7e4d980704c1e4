import { Injectable } from '@nestjs/common';
import { columns, type JsonValue } from '../core/db/database.js';
import { Db } from '../core/db/db.js';
import type { Row } from '../core/db/rows.js';
import { skipTake } from '../core/rows/page.js';
import { GenerateSql, Sample } from '../core/db/generate-sql.js';

export interface AuditLogEntry {
  operatorId: string | null;
  operatorEmail: string | null;
  action: string;
  targetType: string;
  targetId: string;
  details?: JsonValue;
}

/** An audit entry as stored (its 64-bit id read as a number: what the console's JSON answers). */
export type StoredAuditLog = Row<'audit_logs'>;

/** Owns `audit_logs`. Writes join the caller's unit of work, so an entry commits with the change it records. */
@Injectable()
export class AuditLogsRepository {
  constructor(private readonly db: Db) {}

  @GenerateSql({
    params: [
      Sample.UUID,
      {
        operatorId: Sample.UUID2,
        operatorEmail: Sample.EMAIL,
        action: Sample.STRING,
        targetType: Sample.STRING,
        targetId: Sample.STRING,
        details: { before: Sample.STRING },
      },
    ],
  })
  async append(organizationId: string, entry: AuditLogEntry): Promise<void> {
    await this.db
      .on()
      .insertInto('audit_logs')
      .values({
        organization_id: organizationId,
        operator_id: entry.operatorId,
        operator_email: entry.operatorEmail,
        action: entry.action,
        target_type: entry.targetType,
        target_id: entry.targetId,
        details: entry.details === undefined ? null : JSON.stringify(entry.details),
      })
      .execute();
  }

  /** Newest first. */
  @GenerateSql({ params: [Sample.UUID, Sample.PAGE] })
  async page(
    organizationId: string,
    query: { page: number; limit: number },
  ): Promise<{ rows: StoredAuditLog[]; total: number }> {
    const entries = this.db.on().selectFrom('audit_logs').where('organization_id', '=', organizationId);
    const { skip, take } = skipTake(query);
    const [rows, counted] = await Promise.all([
      entries
        .select(columns.audit_logs)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(take)
        .offset(skip)
        .execute(),
      entries.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }

  /**
   * Rewrites the organization's entries whose details name one of these addresses (a blocked user's number, say),
   * each occurrence replaced by `replacement` (a keyed hash): an erased contact stays provable, never readable.
   * Joins the caller's unit of work. Returns how many entries changed.
   */
  @GenerateSql({
    params: [Sample.UUID, [Sample.PHONE], Sample.STRING],
    rows: [{ id: 1, details: { to: Sample.PHONE } }],
  })
  async replaceInDetails(organizationId: string, addresses: string[], replacement: string): Promise<number> {
    const db = this.db.on();
    const rows = await db
      .selectFrom('audit_logs')
      .select(['id', 'details'])
      .where('organization_id', '=', organizationId)
      .where((eb) =>
        eb.or(addresses.map((a) => eb(eb.fn<number>('strpos', [eb.cast('details', 'text'), eb.val(a)]), '>', 0))),
      )
      .execute();
    for (const r of rows) {
      let text = JSON.stringify(r.details);
      for (const a of addresses) text = text.split(a).join(replacement);
      await db.updateTable('audit_logs').set({ details: text }).where('id', '=', r.id).execute();
    }
    return rows.length;
  }
}
