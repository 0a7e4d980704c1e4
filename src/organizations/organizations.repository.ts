import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { columns } from '../core/db/database.js';
import { Db } from '../core/db/db.js';
import type { Row } from '../core/db/rows.js';
import { GenerateSql, Sample } from '../core/db/generate-sql.js';

export type Organization = Row<'organizations'>;

/** An organization whose message content is due for scrubbing: its retention in force and how far it has got. */
export interface ContentRetentionDue {
  id: string;
  /** The organization's own setting, or the service's default (CONTENT_RETENTION_DAYS); never 0 here. */
  days: number;
  scrubbedThrough: Date | null;
}

/** Owns `organizations`: the tenants and their settings. */
@Injectable()
export class OrganizationsRepository {
  constructor(private readonly db: Db) {}

  @GenerateSql({ params: [Sample.STRING] })
  create(name: string): Promise<Organization> {
    return this.db
      .on()
      .insertInto('organizations')
      .values({ id: randomUUID(), name })
      .returning(columns.organizations)
      .executeTakeFirstOrThrow();
  }

  @GenerateSql({ params: [Sample.UUID] })
  get(id: string): Promise<Organization> {
    return this.db
      .on()
      .selectFrom('organizations')
      .select(columns.organizations)
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  }

  /** The organization's own content retention: days, 0 (forever) or null (the service's default). */
  @GenerateSql({ params: [Sample.UUID, 30] })
  setContentRetention(id: string, days: number | null): Promise<Organization> {
    return this.db
      .on()
      .updateTable('organizations')
      .set({ content_retention_days: days })
      .where('id', '=', id)
      .returning(columns.organizations)
      .executeTakeFirstOrThrow();
  }

  /** Every organization whose retention in force (its own, else `defaultDays`) is not "forever", by id. */
  @GenerateSql({ params: [30] })
  contentRetentionDue(defaultDays: number): Promise<ContentRetentionDue[]> {
    return this.db
      .on()
      .selectFrom('organizations')
      .select((eb) => [
        'id',
        eb.fn.coalesce('content_retention_days', eb.val(defaultDays)).as('days'),
        'content_scrubbed_through as scrubbedThrough',
      ])
      .where((eb) => eb(eb.fn.coalesce('content_retention_days', eb.val(defaultDays)), '>', 0))
      .orderBy('id')
      .execute();
  }

  /** Everything of the organization created before `through` holds no content any more (the mark only moves on). */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async markScrubbedThrough(id: string, through: Date): Promise<void> {
    await this.db
      .on()
      .updateTable('organizations')
      .set({ content_scrubbed_through: through })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('content_scrubbed_through', 'is', null), eb('content_scrubbed_through', '<', through)]))
      .execute();
  }
}
