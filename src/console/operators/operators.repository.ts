import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { columns } from '../../core/db/database.js';
import { Db } from '../../core/db/db.js';
import { lockForTransaction } from '../../core/db/advisory-lock.js';
import { columnsOf, type Row } from '../../core/db/rows.js';
import { skipTake } from '../../core/rows/page.js';
import type { OperatorRole } from '../../auth/roles.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export { OPERATOR_ROLES, type OperatorRole } from '../../auth/roles.js';

export type Operator = Row<'operators'>;
export type OperatorWithOrganization = Operator & { organization: { id: string; name: string } };

/** Owns `operators`. Reads join the operator's organization for its name (one statement per login). */
@Injectable()
export class OperatorsRepository {
  constructor(private readonly db: Db) {}

  /** Null when the email is already registered (the unique index decides between racing signups). */
  @GenerateSql({
    params: [Sample.UUID, { email: Sample.EMAIL, passwordHash: Sample.STRING, role: 'admin' }],
    rows: [{ id: Sample.UUID2 }],
  })
  async create(
    organizationId: string,
    operator: { email: string; passwordHash: string; role: OperatorRole },
  ): Promise<OperatorWithOrganization | null> {
    const created = await this.db
      .on()
      .insertInto('operators')
      .values({
        id: randomUUID(),
        organization_id: organizationId,
        email: operator.email,
        password_hash: operator.passwordHash,
        role: operator.role,
      })
      .onConflict((oc) => oc.column('email').doNothing())
      .returning('id')
      .executeTakeFirst();
    return created ? this.findById(created.id) : null;
  }

  /** Login: by email, across organizations (the email is what identifies an operator). */
  @GenerateSql({ params: [Sample.EMAIL] })
  async findByEmail(email: string): Promise<OperatorWithOrganization | null> {
    const row = await this.withOrganization().where('o.email', '=', email).executeTakeFirst();
    return row ? withOrganization(row) : null;
  }

  @GenerateSql({ params: [Sample.UUID] })
  async findById(id: string): Promise<OperatorWithOrganization | null> {
    const row = await this.withOrganization().where('o.id', '=', id).executeTakeFirst();
    return row ? withOrganization(row) : null;
  }

  /** Sets or clears the platform-administrator flag of the operator with this email; false when there is none (or it was removed). */
  @GenerateSql({ params: [Sample.EMAIL, true] })
  async setPlatformAdmin(email: string, platformAdmin: boolean): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('operators')
      .set({ platform_admin: platformAdmin })
      .where('email', '=', email)
      .where('removed_at', 'is', null)
      .executeTakeFirstOrThrow();
    return numUpdatedRows > 0n;
  }

  /** The platform administrators' emails, sorted. */
  @GenerateSql()
  async listPlatformAdmins(): Promise<string[]> {
    const rows = await this.db
      .on()
      .selectFrom('operators')
      .select('email')
      .where('platform_admin', '=', true)
      .orderBy('email')
      .execute();
    return rows.map((r) => r.email);
  }

  /** The organization's operators (removed ones left out), oldest first, as GET /api-keys pages them. */
  @GenerateSql({ params: [Sample.UUID, Sample.PAGE] })
  async pageMembers(
    organizationId: string,
    query: { page: number; limit: number },
  ): Promise<{ rows: Operator[]; total: number }> {
    const db = this.db.on();
    const members = db
      .selectFrom('operators')
      .where('organization_id', '=', organizationId)
      .where('removed_at', 'is', null);
    const { skip, take } = skipTake(query);
    const [rows, counted] = await Promise.all([
      members.select(columns.operators).orderBy('created_at').orderBy('id').limit(take).offset(skip).execute(),
      members.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }

  /** An operator of the organization that has not been removed. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2] })
  async findMember(organizationId: string, id: string): Promise<Operator | null> {
    const row = await this.db
      .on()
      .selectFrom('operators')
      .select(columns.operators)
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('removed_at', 'is', null)
      .executeTakeFirst();
    return row ?? null;
  }

  /** Emails of these operators of the organization (removed ones included: what they made stays attributed). */
  @GenerateSql({ params: [Sample.UUID, [Sample.UUID, Sample.UUID2]] })
  async emailsOf(organizationId: string, ids: string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const rows = await this.db
      .on()
      .selectFrom('operators')
      .select(['id', 'email'])
      .where('organization_id', '=', organizationId)
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((r) => [r.id, r.email]));
  }

  /**
   * The organization's owners (not removed), counted under a transaction-scoped lock of its operators' roles, so two
   * owners demoting or removing each other at once cannot both see another owner left (call inside a unit of work).
   */
  @GenerateSql({ params: [Sample.UUID] })
  async countOwnersLocked(organizationId: string): Promise<number> {
    const db = this.db.on();
    await lockForTransaction(db, `operators:${organizationId}`);
    const { n } = await db
      .selectFrom('operators')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('role', '=', 'owner')
      .where('removed_at', 'is', null)
      .executeTakeFirstOrThrow();
    return n;
  }

  /** Sets the role of a (not removed) operator of the organization; null when there is none. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, 'admin'] })
  async setRole(organizationId: string, id: string, role: OperatorRole): Promise<Operator | null> {
    const row = await this.db
      .on()
      .updateTable('operators')
      .set({ role })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('removed_at', 'is', null)
      .returning(columns.operators)
      .executeTakeFirst();
    return row ?? null;
  }

  /** Removes an operator from the organization (it can never sign in again; the row stays); false when already removed. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async markRemoved(organizationId: string, id: string, at: Date): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('operators')
      .set({ removed_at: at })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('removed_at', 'is', null)
      .executeTakeFirstOrThrow();
    return numUpdatedRows === 1n;
  }

  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async recordLogin(id: string, at: Date): Promise<void> {
    await this.db
      .on()
      .updateTable('operators')
      .set({ last_login_at: at })
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirstOrThrow();
  }

  /** Sets a new password hash, unless the hash changed since it was read (false then). */
  @GenerateSql({ params: [Sample.UUID, Sample.STRING, Sample.STRING] })
  async replacePasswordHash(id: string, from: string, to: string): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('operators')
      .set({ password_hash: to })
      .where('id', '=', id)
      .where('password_hash', '=', from)
      .executeTakeFirstOrThrow();
    return numUpdatedRows === 1n;
  }

  /** Sets a new password hash whatever the current one (a password-reset link). */
  @GenerateSql({ params: [Sample.UUID, Sample.STRING] })
  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.db
      .on()
      .updateTable('operators')
      .set({ password_hash: passwordHash })
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirstOrThrow();
  }

  /** Replaces a password hash with a stronger one of the same password, unless it changed in the meantime. */
  @GenerateSql({ params: [Sample.UUID, Sample.STRING, Sample.STRING] })
  async upgradePasswordHash(id: string, from: string, to: string): Promise<void> {
    await this.replacePasswordHash(id, from, to);
  }

  /** Operators (`o`) with their organization's name. */
  private withOrganization() {
    return this.db
      .on()
      .selectFrom('operators as o')
      .innerJoin('organizations as g', 'g.id', 'o.organization_id')
      .select(columnsOf('operators', 'o'))
      .select('g.name as organizationName');
  }
}

function withOrganization<R extends { organizationId: string; organizationName: string }>({
  organizationName,
  ...operator
}: R): Omit<R, 'organizationName'> & { organization: { id: string; name: string } } {
  return { ...operator, organization: { id: operator.organizationId, name: organizationName } };
}
