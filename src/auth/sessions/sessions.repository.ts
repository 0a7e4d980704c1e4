import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { columns } from '../../core/db/database.js';
import { Db } from '../../core/db/db.js';
import { columnsOf, type Row } from '../../core/db/rows.js';
import { prepared } from '../../core/db/statement.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export type Session = Row<'sessions'>;

export type SessionWithOperator = Session & {
  operator: {
    id: string;
    organizationId: string;
    email: string;
    role: string;
    platformAdmin: boolean;
    removedAt: Date | null;
  };
};

/** Every console request reads its session (joined with its operator: one statement): a named prepared statement. */
const byTokenHash = prepared('session_by_token_hash', (db, p: { tokenHash: string }) =>
  db
    .selectFrom('sessions as s')
    .innerJoin('operators as o', 'o.id', 's.operator_id')
    .select(columnsOf('sessions', 's'))
    .select([
      'o.organization_id as operatorOrganizationId',
      'o.email as operatorEmail',
      'o.role as operatorRole',
      'o.platform_admin as operatorPlatformAdmin',
      'o.removed_at as operatorRemovedAt',
    ])
    .where('s.token_hash', '=', p.tokenHash),
);

/** Owns `sessions`. Sessions are found by the hash of their token only; the token itself is never stored. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly db: Db) {}

  @GenerateSql({ params: [Sample.UUID, { tokenHash: Sample.STRING, expiresAt: Sample.DATE, lastSeenAt: Sample.DATE }] })
  async create(operatorId: string, session: { tokenHash: string; expiresAt: Date; lastSeenAt: Date }): Promise<void> {
    await this.db
      .on()
      .insertInto('sessions')
      .values({
        id: randomUUID(),
        operator_id: operatorId,
        token_hash: session.tokenHash,
        expires_at: session.expiresAt,
        last_seen_at: session.lastSeenAt,
      })
      .execute();
  }

  /** The session with this token hash and who it belongs to (joined: one statement per console request). */
  async findByTokenHash(tokenHash: string): Promise<SessionWithOperator | null> {
    const { rows } = await this.db.exec(byTokenHash, { tokenHash });
    const row = rows[0];
    if (!row) return null;
    const {
      operatorOrganizationId,
      operatorEmail,
      operatorRole,
      operatorPlatformAdmin,
      operatorRemovedAt,
      ...session
    } = row;
    return {
      ...session,
      operator: {
        id: session.operatorId,
        organizationId: operatorOrganizationId,
        email: operatorEmail,
        role: operatorRole,
        platformAdmin: operatorPlatformAdmin,
        removedAt: operatorRemovedAt,
      },
    };
  }

  @GenerateSql({ params: [Sample.UUID] })
  async findById(id: string): Promise<Session | null> {
    return (
      (await this.db.on().selectFrom('sessions').select(columns.sessions).where('id', '=', id).executeTakeFirst()) ??
      null
    );
  }

  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async touch(id: string, at: Date): Promise<void> {
    await this.db
      .on()
      .updateTable('sessions')
      .set({ last_seen_at: at })
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirstOrThrow();
  }

  /** Revokes every live session of the operator, but `except` (the caller's own); how many it ended. */
  @GenerateSql(
    { name: 'every session', params: [Sample.UUID, Sample.DATE] },
    { name: 'but one', params: [Sample.UUID, Sample.DATE, Sample.UUID2] },
  )
  async revokeAllOf(operatorId: string, at: Date, except?: string): Promise<number> {
    let update = this.db
      .on()
      .updateTable('sessions')
      .set({ revoked_at: at })
      .where('operator_id', '=', operatorId)
      .where('revoked_at', 'is', null);
    if (except) update = update.where('id', '<>', except);
    const { numUpdatedRows } = await update.executeTakeFirstOrThrow();
    return Number(numUpdatedRows);
  }

  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async revoke(id: string, at: Date): Promise<void> {
    await this.db
      .on()
      .updateTable('sessions')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /**
   * Deletes up to `limit` sessions that can no longer authenticate as of `now`: past their absolute expiry,
   * unused since `idleSince`, or revoked. Returns how many.
   */
  @GenerateSql({ params: [{ now: Sample.DATE, idleSince: Sample.DATE }, Sample.NUMBER] })
  async deleteEnded(at: { now: Date; idleSince: Date }, limit: number): Promise<number> {
    const { numDeletedRows } = await this.db
      .on()
      .deleteFrom('sessions')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('sessions')
          .select('id')
          .where((w) =>
            w.or([w('expires_at', '<=', at.now), w('last_seen_at', '<=', at.idleSince), w('revoked_at', '<=', at.now)]),
          )
          .limit(limit),
      )
      .executeTakeFirstOrThrow();
    return Number(numDeletedRows);
  }
}
