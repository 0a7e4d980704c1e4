import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { UpdateObject } from 'kysely';
import { columns, type Database } from '../../core/db/database.js';
import { Db, type Tx } from '../../core/db/db.js';
import { jsonRecords, now, unnest } from '../../core/db/pg.js';
import type { Row } from '../../core/db/rows.js';
import { prepared } from '../../core/db/statement.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { skipTake } from '../../core/rows/page.js';
import type { AccountSendState } from '../health/account-health.js';
import type { AccountStanding } from '../standing/account-standing.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export const BUSINESS_ACCOUNT_NOT_FOUND = 'Business account not found';

export type BusinessAccount = Row<'business_accounts'>;

/** An upstream token as stored: sealed, bound to its business account's wabaId. */
export interface StoredCredential {
  wabaId: string;
  accessTokenEncrypted: string;
}

/** A token as a connect or a replacement stores it: just checked, accepted, and the app subscribed. */
export interface VerifiedCredential {
  accessTokenEncrypted: string;
  /** When the token was checked and the subscription made. */
  checkedAt: Date;
  /** Meta's marketing_messages_onboarding_status as the check read it (absent: not in the answer). */
  marketingMessagesStatus?: string;
}

/**
 * What a credential check found: accepted (with the Marketing Messages API onboarding status the same read gave),
 * or rejected with the upstream platform's reason.
 */
export type CredentialVerdict = { valid: true; marketingMessagesStatus?: string } | { valid: false; error: string };

/** An account whose token is due for its scheduled check. */
export interface CredentialCheckDue extends StoredCredential {
  id: string;
  organizationId: string;
}

const sendState = prepared('business_account_send_state', (db, p: { id: string }) =>
  db
    .selectFrom('business_accounts')
    .select([
      'credentials_valid as credentialsValid',
      'credentials_error as credentialsError',
      'ban_state as banState',
      'ban_date as banDate',
      'restrictions',
      'marketing_messages_status as marketingMessagesStatus',
    ])
    .where('id', '=', p.id)
    .$castTo<AccountSendState>(),
);

/** An account's standing as the worker locks and writes it back (see accounts/standing/account-standing.ts). */
export type LockedStanding = AccountStanding & { id: string; wabaId: string };

/** In id order, as every chunk locks them: concurrent chunks never wait on each other in a cycle. */
const lockStandings = prepared(
  'business_accounts_lock_standings',
  (db, p: { wabaIds: string[] }) =>
    db
      .selectFrom('business_accounts')
      .select([
        'id',
        'waba_id as wabaId',
        'ban_state as banState',
        'ban_date as banDate',
        'restrictions',
        'violation_type as violationType',
        'pricing_tiers as pricingTiers',
        'alerts',
        'standing_updated_at as updatedAt',
        'standing_times as times',
      ])
      .where((eb) => eb('waba_id', '=', eb.fn.any(eb.val(p.wabaIds))))
      .orderBy('id')
      .forUpdate()
      .$castTo<LockedStanding>(),
  { planned: true },
);

const writeStandings = prepared(
  'business_accounts_write_standings',
  (db, p: { standings: string }) =>
    db
      .updateTable('business_accounts as b')
      .from(
        jsonRecords(
          'v',
          {
            id: 'uuid',
            banState: 'text',
            banDate: 'text',
            restrictions: 'jsonb',
            violationType: 'text',
            pricingTiers: 'jsonb',
            alerts: 'jsonb',
            updatedAt: 'timestamptz',
            times: 'jsonb',
          },
          p.standings,
        ),
      )
      .set((eb) => ({
        ban_state: eb.ref('v.banState'),
        ban_date: eb.ref('v.banDate'),
        // jsonb as it is (the generated types write JSON text: these are jsonb already).
        restrictions: eb.ref('v.restrictions').$castTo<string>(),
        violation_type: eb.ref('v.violationType'),
        pricing_tiers: eb.ref('v.pricingTiers').$castTo<string>(),
        alerts: eb.ref('v.alerts').$castTo<string>(),
        standing_updated_at: eb.ref('v.updatedAt'),
        standing_times: eb.ref('v.times').$castTo<string>(),
        updated_at: now(),
      }))
      .whereRef('b.id', '=', 'v.id'),
  { planned: true },
);

/** Onboarded to the Marketing Messages API by Meta's webhook, unless something newer was learnt already. */
const markMarketingMessagesOnboarded = prepared(
  'business_accounts_marketing_onboarded',
  (db, p: { waba: string[]; at: Date[] }) =>
    db
      .updateTable('business_accounts as b')
      .from(unnest('v', { waba: 'text', at: 'timestamptz' }, p))
      .set((eb) => ({
        marketing_messages_status: 'ONBOARDED',
        marketing_messages_updated_at: eb.ref('v.at'),
        updated_at: now(),
      }))
      .whereRef('b.waba_id', '=', 'v.waba')
      .where((eb) =>
        eb.or([
          eb('b.marketing_messages_updated_at', 'is', null),
          eb('b.marketing_messages_updated_at', '<=', eb.ref('v.at')),
        ]),
      ),
  { planned: true },
);

/** Owns `business_accounts`. Every read and write names the organization it acts for, but the few noted. */
@Injectable()
export class BusinessAccountsRepository {
  constructor(private readonly db: Db) {}

  /** The organization's business account with this wabaId (connected or not), or NotFound. */
  @GenerateSql({ params: [Sample.UUID, Sample.WABA_ID] })
  async getOwned(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    const account = await this.accounts()
      .where('organization_id', '=', organizationId)
      .where('waba_id', '=', wabaId)
      .executeTakeFirst();
    if (!account) throw new NotFound(BUSINESS_ACCOUNT_NOT_FOUND);
    return account;
  }

  /** As getOwned, but only while connected: syncs and new keys need a live credential. */
  @GenerateSql({ params: [Sample.UUID, Sample.WABA_ID] })
  async getConnected(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    const account = await this.getOwned(organizationId, wabaId);
    if (account.disconnectedAt) throw new NotFound(BUSINESS_ACCOUNT_NOT_FOUND);
    return account;
  }

  /** One page of the organization's accounts, oldest connected first, and how many there are. */
  @GenerateSql({ params: [Sample.UUID, Sample.PAGE] })
  async page(
    organizationId: string,
    query: { page: number; limit: number },
  ): Promise<{ rows: BusinessAccount[]; total: number }> {
    const { skip, take } = skipTake(query);
    const [rows, counted] = await Promise.all([
      this.accounts()
        .where('organization_id', '=', organizationId)
        .orderBy('created_at')
        .orderBy('id')
        .limit(take)
        .offset(skip)
        .execute(),
      this.db
        .on()
        .selectFrom('business_accounts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }

  @GenerateSql({ params: [Sample.UUID] })
  list(organizationId: string): Promise<BusinessAccount[]> {
    return this.accounts().where('organization_id', '=', organizationId).orderBy('created_at').execute();
  }

  /** Across organizations on purpose: a WABA belongs to one organization, so connecting one looks everywhere. */
  @GenerateSql({ params: [Sample.WABA_ID] })
  async findAnyByWabaId(wabaId: string): Promise<BusinessAccount | null> {
    return (await this.accounts().where('waba_id', '=', wabaId).executeTakeFirst()) ?? null;
  }

  /** The stored (encrypted) token of a business account, the scope of a key pair; null once disconnected. */
  @GenerateSql({ params: [Sample.UUID] })
  async findCredential(businessAccountId: string): Promise<StoredCredential | null> {
    const account = await this.db
      .on()
      .selectFrom('business_accounts')
      .select([
        'waba_id as wabaId',
        'access_token_encrypted as accessTokenEncrypted',
        'disconnected_at as disconnectedAt',
      ])
      .where('id', '=', businessAccountId)
      .executeTakeFirst();
    return account && !account.disconnectedAt
      ? { wabaId: account.wabaId, accessTokenEncrypted: account.accessTokenEncrypted }
      : null;
  }

  /**
   * Across organizations on purpose (key rotation re-seals every stored token): the next `limit` accounts,
   * connected or not, after the id `afterId`, in id order.
   */
  @GenerateSql(
    { name: 'first page', params: [undefined, Sample.NUMBER] },
    { name: 'after an id', params: [Sample.UUID, Sample.NUMBER] },
  )
  credentialsAfter(afterId: string | undefined, limit: number): Promise<(StoredCredential & { id: string })[]> {
    return this.credentialsPage(afterId, limit).execute();
  }

  /** Accounts whose token is still sealed in the retired v1 format, by id, after `afterId`. */
  @GenerateSql(
    { name: 'first page', params: [undefined, Sample.NUMBER] },
    { name: 'after an id', params: [Sample.UUID, Sample.NUMBER] },
  )
  legacyCredentialsAfter(afterId: string | undefined, limit: number): Promise<(StoredCredential & { id: string })[]> {
    return this.credentialsPage(afterId, limit).where('access_token_encrypted', 'like', 'v1.%').execute();
  }

  @GenerateSql()
  async countAll(): Promise<number> {
    const { n } = await this.db
      .on()
      .selectFrom('business_accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return n;
  }

  /** Replaces the stored token only if it is still `expected` (a reconnect meanwhile wins); whether it did. */
  @GenerateSql({ params: [Sample.UUID, Sample.STRING, Sample.STRING] })
  async replaceCredentialIf(id: string, expected: string, accessTokenEncrypted: string): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('business_accounts')
      .set({ access_token_encrypted: accessTokenEncrypted, updated_at: now() })
      .where('id', '=', id)
      .where('access_token_encrypted', '=', expected)
      .executeTakeFirstOrThrow();
    return numUpdatedRows === 1n;
  }

  /** A new connection; null when the wabaId is already taken (the unique index decides between racing connects). */
  @GenerateSql({
    params: [
      Sample.UUID,
      { wabaId: Sample.WABA_ID, name: Sample.STRING },
      { accessTokenEncrypted: Sample.STRING, checkedAt: Sample.DATE, marketingMessagesStatus: Sample.STRING },
    ],
  })
  async create(
    organizationId: string,
    account: { wabaId: string; name: string },
    credential: VerifiedCredential,
  ): Promise<BusinessAccount | null> {
    const created = await this.db
      .on()
      .insertInto('business_accounts')
      .values({
        id: randomUUID(),
        organization_id: organizationId,
        waba_id: account.wabaId,
        name: account.name,
        ...verified(credential),
        updated_at: now(),
      })
      .onConflict((oc) => oc.column('waba_id').doNothing())
      .returning(columns.business_accounts)
      .executeTakeFirst();
    return created ?? null;
  }

  /** Connected again, with a new (verified) token and a new name when given: credential and subscription state start afresh. */
  @GenerateSql(
    {
      name: 'name kept',
      params: [
        Sample.UUID,
        Sample.UUID2,
        { accessTokenEncrypted: Sample.STRING, checkedAt: Sample.DATE, marketingMessagesStatus: Sample.STRING },
      ],
    },
    {
      name: 'renamed',
      params: [
        Sample.UUID,
        Sample.UUID2,
        { accessTokenEncrypted: Sample.STRING, checkedAt: Sample.DATE, marketingMessagesStatus: Sample.STRING },
        Sample.STRING,
      ],
    },
  )
  reconnect(
    organizationId: string,
    id: string,
    credential: VerifiedCredential,
    name?: string,
  ): Promise<BusinessAccount> {
    return this.updateOwned(organizationId, id, {
      ...verified(credential),
      ...(name !== undefined ? { name } : {}),
      disconnected_at: null,
    });
  }

  /** The account's webhook subscription was made again and checked. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  markWebhooksSubscribed(organizationId: string, id: string, at: Date): Promise<BusinessAccount> {
    return this.updateOwned(organizationId, id, { webhooks_subscribed: true, webhooks_checked_at: at });
  }

  /**
   * Records what a check of the token `checkedCiphertext` found, only if that is still the stored token (a
   * replacement meanwhile was verified itself and wins); the updated account, or null when it was replaced.
   */
  @GenerateSql(
    {
      name: 'valid',
      params: [
        Sample.UUID,
        Sample.UUID2,
        Sample.STRING,
        { valid: true, marketingMessagesStatus: Sample.STRING },
        Sample.DATE,
      ],
    },
    {
      name: 'rejected',
      params: [Sample.UUID, Sample.UUID2, Sample.STRING, { valid: false, error: Sample.STRING }, Sample.DATE],
    },
  )
  async recordCredentialCheck(
    organizationId: string,
    id: string,
    checkedCiphertext: string,
    verdict: CredentialVerdict,
    at: Date,
  ): Promise<BusinessAccount | null> {
    const db = this.db.on();
    const checked = await db
      .updateTable('business_accounts')
      .set({
        credentials_valid: verdict.valid,
        credentials_error: verdict.valid ? null : verdict.error,
        credentials_checked_at: at,
        ...(verdict.valid && verdict.marketingMessagesStatus !== undefined
          ? { marketing_messages_status: verdict.marketingMessagesStatus, marketing_messages_updated_at: at }
          : {}),
        // A rejection starts the holder's read cut-off (kept from the first rejection); an acceptance proves the token again.
        readable_until: verdict.valid ? null : (eb) => eb.fn.coalesce('readable_until', eb.val(at)),
        updated_at: now(),
      })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('access_token_encrypted', '=', checkedCiphertext)
      .returning(columns.business_accounts)
      .executeTakeFirst();
    return checked ?? null;
  }

  /**
   * Across organizations on purpose (the worker's scheduled check looks at every account): up to `limit`
   * connected accounts after the id `afterId`, in id order, whose token was not checked since `dueBefore`.
   */
  @GenerateSql(
    { name: 'first page', params: [Sample.DATE, undefined, Sample.NUMBER] },
    { name: 'after an id', params: [Sample.DATE, Sample.UUID, Sample.NUMBER] },
  )
  credentialChecksDue(dueBefore: Date, afterId: string | undefined, limit: number): Promise<CredentialCheckDue[]> {
    let due = this.db
      .on()
      .selectFrom('business_accounts')
      .select([
        'id',
        'organization_id as organizationId',
        'waba_id as wabaId',
        'access_token_encrypted as accessTokenEncrypted',
      ])
      .where('disconnected_at', 'is', null)
      .where((eb) => eb.or([eb('credentials_checked_at', 'is', null), eb('credentials_checked_at', '<', dueBefore)]));
    if (afterId) due = due.where('id', '>', afterId);
    return due.orderBy('id').limit(limit).execute();
  }

  /** The send path's read of the account: credentials and standing (a named prepared statement: it runs on every send-context cache miss); null if unknown. */
  async sendState(businessAccountId: string): Promise<AccountSendState | null> {
    const { rows } = await this.db.exec(sendState, { id: businessAccountId });
    return rows[0] ?? null;
  }

  /** Disconnected at `at`: also the holder's read cut-off (what arrives later is not its to read), unless one started earlier. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  disconnect(organizationId: string, id: string, at: Date): Promise<BusinessAccount> {
    return this.updateOwned(organizationId, id, {
      disconnected_at: at,
      readable_until: (eb) => eb.fn.coalesce('readable_until', eb.val(at)),
    });
  }

  /**
   * Across organizations on purpose: the account moves to `organizationId`, which proved a token Meta accepts for it,
   * only if it is still as `from` was read (same holder and token, still disconnected or with rejected credentials):
   * an old holder that reconnected meanwhile keeps it (null). The new holder reads from `at` on.
   */
  @GenerateSql({
    params: [
      Sample.UUID,
      { id: Sample.UUID2, organizationId: Sample.UUID2, accessTokenEncrypted: Sample.STRING },
      { accessTokenEncrypted: Sample.STRING, checkedAt: Sample.DATE, marketingMessagesStatus: Sample.STRING },
      Sample.STRING,
      Sample.DATE,
    ],
  })
  async takeOver(
    organizationId: string,
    from: { id: string; organizationId: string; accessTokenEncrypted: string },
    credential: VerifiedCredential,
    name: string,
    at: Date,
  ): Promise<BusinessAccount | null> {
    const taken = await this.db
      .on()
      .updateTable('business_accounts')
      .set({
        organization_id: organizationId,
        ...verified(credential),
        name,
        disconnected_at: null,
        held_since: at,
        updated_at: now(),
      })
      .where('id', '=', from.id)
      .where('organization_id', '=', from.organizationId)
      .where('access_token_encrypted', '=', from.accessTokenEncrypted)
      .where((eb) => eb.or([eb('disconnected_at', 'is not', null), eb('credentials_valid', '=', false)]))
      .returning(columns.business_accounts)
      .executeTakeFirst();
    return taken ?? null;
  }

  @GenerateSql(
    { name: 'phone numbers', params: [Sample.UUID, Sample.UUID2, 'phoneNumbers', Sample.DATE] },
    { name: 'templates', params: [Sample.UUID, Sample.UUID2, 'templates', Sample.DATE] },
  )
  async markSynced(organizationId: string, id: string, what: 'phoneNumbers' | 'templates', at: Date): Promise<void> {
    await this.updateOwned(
      organizationId,
      id,
      what === 'phoneNumbers' ? { phone_numbers_synced_at: at } : { templates_synced_at: at },
    );
  }

  /**
   * The worker's account-level webhooks, in its transaction: the standing of the accounts with these wabaIds
   * (by wabaId: Meta's entry id, the tenant scope of a webhook), locked in id order until the chunk commits.
   */
  async lockStandings(tx: Tx, wabaIds: string[]): Promise<LockedStanding[]> {
    if (wabaIds.length === 0) return [];
    const { rows } = await this.db.exec(lockStandings, { wabaIds }, tx);
    return rows;
  }

  /** The worker's MM_LITE_TERMS_SIGNED webhooks, in its transaction (one per account: the newest). */
  async markMarketingMessagesOnboarded(tx: Tx, onboarded: { wabaId: string; at: Date }[]): Promise<void> {
    const newest = new Map<string, Date>();
    for (const o of onboarded) {
      const seen = newest.get(o.wabaId);
      if (!seen || o.at > seen) newest.set(o.wabaId, o.at);
    }
    if (newest.size === 0) return;
    await this.db.exec(markMarketingMessagesOnboarded, { waba: [...newest.keys()], at: [...newest.values()] }, tx);
  }

  /** Writes back standings locked by lockStandings, each once, in one statement. */
  async writeStandings(tx: Tx, standings: LockedStanding[]): Promise<void> {
    if (standings.length === 0) return;
    await this.db.exec(writeStandings, { standings: JSON.stringify(standings) }, tx);
  }

  /** Whole accounts, as the console and the services read them. */
  private accounts() {
    return this.db.on().selectFrom('business_accounts').select(columns.business_accounts);
  }

  /** The next `limit` credentials after `afterId`, in id order. */
  private credentialsPage(afterId: string | undefined, limit: number) {
    let page = this.db
      .on()
      .selectFrom('business_accounts')
      .select(['id', 'waba_id as wabaId', 'access_token_encrypted as accessTokenEncrypted']);
    if (afterId) page = page.where('id', '>', afterId);
    return page.orderBy('id').limit(limit);
  }

  /** Changes the organization's account (throws when it has none with this id, as an update of a missing row does); the account after. */
  private updateOwned(
    organizationId: string,
    id: string,
    changes: UpdateObject<Database, 'business_accounts'>,
  ): Promise<BusinessAccount> {
    return this.db
      .on()
      .updateTable('business_accounts')
      .set({ ...changes, updated_at: now() })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .returning(columns.business_accounts)
      .executeTakeFirstOrThrow();
  }
}

function verified(credential: VerifiedCredential) {
  return {
    access_token_encrypted: credential.accessTokenEncrypted,
    webhooks_subscribed: true,
    webhooks_checked_at: credential.checkedAt,
    credentials_valid: true,
    credentials_error: null,
    credentials_checked_at: credential.checkedAt,
    readable_until: null,
    ...(credential.marketingMessagesStatus !== undefined
      ? {
          marketing_messages_status: credential.marketingMessagesStatus,
          marketing_messages_updated_at: credential.checkedAt,
        }
      : {}),
  };
}
