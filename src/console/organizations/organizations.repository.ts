import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { columns } from '../../core/db/database.js';
import { Db } from '../../core/db/db.js';
import type { Row } from '../../core/db/rows.js';

export type Organization = Row<'organizations'>;

/** Owns `organizations`. */
@Injectable()
export class OrganizationsRepository {
  constructor(private readonly db: Db) {}

  create(name: string): Promise<Organization> {
    return this.db
      .on()
      .insertInto('organizations')
      .values({ id: randomUUID(), name })
      .returning(columns.organizations)
      .executeTakeFirstOrThrow();
  }
}
