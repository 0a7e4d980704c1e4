import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { columns } from '../../core/db/database.js';
import { Db } from '../../core/db/db.js';
import type { Row } from '../../core/db/rows.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export type PasswordReset = Row<'password_resets'>;

/**
 * Owns `password_resets`. Found by the hash of their token only (the token is never stored); `claim` is the one
 * statement that makes a link single-use.
 */
@Injectable()
export class PasswordResetsRepository {
  constructor(private readonly db: Db) {}

  @GenerateSql({
    params: [
      Sample.UUID,
      { operatorId: Sample.UUID2, tokenHash: Sample.STRING, issuedById: Sample.UUID2, expiresAt: Sample.DATE },
    ],
  })
  create(
    organizationId: string,
    reset: { operatorId: string; tokenHash: string; issuedById: string; expiresAt: Date },
  ): Promise<PasswordReset> {
    return this.db
      .on()
      .insertInto('password_resets')
      .values({
        id: randomUUID(),
        organization_id: organizationId,
        operator_id: reset.operatorId,
        token_hash: reset.tokenHash,
        issued_by_id: reset.issuedById,
        expires_at: reset.expiresAt,
      })
      .returning(columns.password_resets)
      .executeTakeFirstOrThrow();
  }

  /** The link carrying this token, whichever organization it is of: the token is its own scope. */
  @GenerateSql({ params: [Sample.STRING] })
  async findByTokenHash(tokenHash: string): Promise<PasswordReset | null> {
    return (
      (await this.db
        .on()
        .selectFrom('password_resets')
        .select(columns.password_resets)
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst()) ?? null
    );
  }

  /** Marks the link used; false when it was used, revoked or expired meanwhile (of two racing uses, one wins). */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async claim(id: string, at: Date): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('password_resets')
      .set({ used_at: at })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', at)
      .executeTakeFirstOrThrow();
    return numUpdatedRows === 1n;
  }

  /** Revokes every unused link of the operator (a newer link replaces them; a removal ends them). */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async revokeAllOf(organizationId: string, operatorId: string, at: Date): Promise<number> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('password_resets')
      .set({ revoked_at: at })
      .where('organization_id', '=', organizationId)
      .where('operator_id', '=', operatorId)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(numUpdatedRows);
  }
}
