import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Updateable } from 'kysely';
import { columns, type Database, type JsonValue } from '../../core/db/database.js';
import { Db, type Tx } from '../../core/db/db.js';
import { now } from '../../core/db/pg.js';
import type { Row } from '../../core/db/rows.js';
import { prepared } from '../../core/db/statement.js';
import { skipTake } from '../../core/rows/page.js';
import type { SyncCounts } from '../phone-numbers/phone-numbers.repository.js';
import type { UpstreamTemplateComponent } from '../../upstream/upstream.types.js';
import type { ParameterCounts } from './template-parameters.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export type Template = Row<'templates'>;

/** A template as the upstream platform lists it, in our column names. Keyed by (name, language). */
export interface SyncedTemplate {
  upstreamId: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  parameterFormat: string;
  components: UpstreamTemplateComponent[];
  parameterCounts: ParameterCounts;
}

/** What a send needs to know of a template: its status, whether removed, and the parameters it expects. */
export interface TemplateSendState {
  status: string;
  removedAt: Date | null;
  parameterCounts: unknown;
  parameterFormat: string;
  category: string | null;
  /** The OTP button's otp_type of an authentication template (ONE_TAP, ZERO_TAP, COPY_CODE); null otherwise. */
  otpType: string | null;
}

const sendState = prepared(
  'template_send_state',
  (db, p: { businessAccountId: string; name: string; language: string }) =>
    db
      .selectFrom('templates')
      .select([
        'status',
        'removed_at as removedAt',
        'parameter_counts as parameterCounts',
        'parameter_format as parameterFormat',
        'category',
        'components',
      ])
      .where('business_account_id', '=', p.businessAccountId)
      .where('name', '=', p.name)
      .where('language', '=', p.language),
);

const languages = prepared('template_languages', (db, p: { businessAccountId: string; name: string }) =>
  db
    .selectFrom('templates')
    .select('language')
    .where('business_account_id', '=', p.businessAccountId)
    .where('name', '=', p.name)
    .where('removed_at', 'is', null)
    .orderBy('language'),
);

/** Meta's decision on a template, from a webhook (by business account wabaId, name and language). */
export interface TemplateDecision {
  wabaId: string;
  name: string;
  language: string;
  /** Meta's time of the decision: one older than the stored status's (or category's) changes nothing. */
  at: Date;
  status?: string;
  reason?: string | null;
  category?: string;
  /** message_template_quality_update: GREEN, YELLOW, RED or UNKNOWN. */
  qualityScore?: string;
}

/** The key of a decision's template: the account by its wabaId (the webhook's tenant), the template's name and language. */
interface DecisionKey {
  wabaId: string;
  name: string;
  language: string;
  at: Date;
}

/**
 * A decision's statement: the template it names (`t`, of the account `b` by wabaId), updated with `set`, unless an
 * attribute was set from a newer decision already (`guard`: the time of the decision that set it).
 */
function decision<P extends object>(
  name: string,
  guard: 'status_updated_at' | 'category_updated_at' | 'quality_updated_at',
  set: (p: DecisionKey & P) => Updateable<Database['templates']>,
) {
  return prepared(name, (db, p: DecisionKey & P) =>
    db
      .updateTable('templates as t')
      .from('business_accounts as b')
      .set({ ...set(p), updated_at: now() })
      .whereRef('b.id', '=', 't.business_account_id')
      .where('b.waba_id', '=', p.wabaId)
      .where('t.name', '=', p.name)
      .where('t.language', '=', p.language)
      .where((eb) => eb.or([eb(`t.${guard}`, 'is', null), eb(`t.${guard}`, '<=', p.at)])),
  );
}

const decide = decision<{ status: string; reason: string | null }>('template_decision', 'status_updated_at', (p) => ({
  status: p.status,
  status_reason: p.reason,
  status_updated_at: p.at,
}));
const recategorise = decision<{ category: string }>('template_category', 'category_updated_at', (p) => ({
  category: p.category,
  category_updated_at: p.at,
}));
const requalify = decision<{ qualityScore: string }>('template_quality', 'quality_updated_at', (p) => ({
  quality_score: p.qualityScore,
  quality_updated_at: p.at,
}));

/**
 * Owns `templates`. Every statement is scoped to one business account, its first argument (webhook decisions:
 * the account's wabaId, in the worker's transaction).
 */
/** The template the @GenerateSql samples store (one APPROVED, POSITIONAL template with one body parameter). */
const SAMPLE_TEMPLATE = {
  upstreamId: Sample.STRING,
  name: Sample.STRING,
  language: 'en_US',
  status: 'APPROVED',
  category: 'UTILITY',
  parameterFormat: 'POSITIONAL',
  components: [],
  parameterCounts: { header: 0, body: 1, buttons: {}, names: { header: [], body: [] } },
} as const;

@Injectable()
export class TemplatesRepository {
  constructor(private readonly db: Db) {}

  /** One page of the account's templates (by name, then language) and how many match. */
  @GenerateSql(
    { name: 'no filter', params: [Sample.UUID, Sample.PAGE] },
    { name: 'every filter', params: [Sample.UUID, { ...Sample.PAGE, status: 'APPROVED', name: Sample.STRING }] },
  )
  async page(
    businessAccountId: string,
    query: { page: number; limit: number; status?: string; name?: string },
  ): Promise<{ rows: Template[]; total: number }> {
    let templates = this.db.on().selectFrom('templates').where('business_account_id', '=', businessAccountId);
    if (query.status !== undefined) templates = templates.where('status', '=', query.status);
    if (query.name !== undefined) templates = templates.where('name', '=', query.name);
    const { skip, take } = skipTake(query);
    const [rows, counted] = await Promise.all([
      templates
        .select(columns.templates)
        .orderBy('name')
        .orderBy('language')
        .orderBy('id')
        .limit(take)
        .offset(skip)
        .execute(),
      templates.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }

  /**
   * Makes the stored templates what the upstream listed (one entry per name and language): listed ones
   * upserted with their status decided at `statusReadAt`, the others marked removed. Run it inside a unit
   * of work: all or nothing.
   */
  @GenerateSql(
    { name: 'none listed', params: [Sample.UUID, [], Sample.DATE, Sample.DATE] },
    {
      name: 'one listed, one gone',
      rows: [{ id: Sample.UUID2, name: 'gone', language: 'en_US', removed_at: null }],
      params: [Sample.UUID, [SAMPLE_TEMPLATE], Sample.DATE, Sample.DATE],
    },
  )
  async replaceAll(
    businessAccountId: string,
    templates: SyncedTemplate[],
    syncedAt: Date,
    statusReadAt: Date,
  ): Promise<SyncCounts> {
    const db = this.db.on();
    const existing = await db
      .selectFrom('templates')
      .select(['id', 'name', 'language', 'removed_at'])
      .where('business_account_id', '=', businessAccountId)
      .execute();
    const keyOf = (t: { name: string; language: string }) => `${t.name}\u0000${t.language}`;
    const known = new Set(existing.map(keyOf));
    if (templates.length > 0) {
      await db
        .insertInto('templates')
        .values(
          // One row per key (a statement may not change a row twice): the last listed wins, as it would one by one.
          [...new Map(templates.map((t) => [keyOf(t), t])).values()].map((t) => ({
            id: randomUUID(),
            business_account_id: businessAccountId,
            upstream_id: t.upstreamId,
            name: t.name,
            language: t.language,
            status: t.status,
            category: t.category,
            parameter_format: t.parameterFormat,
            components: JSON.stringify(t.components),
            parameter_counts: JSON.stringify(t.parameterCounts),
            status_reason: null,
            status_updated_at: statusReadAt,
            category_updated_at: statusReadAt,
            removed_at: null,
            synced_at: syncedAt,
            updated_at: now(),
          })),
        )
        .onConflict((oc) =>
          oc.columns(['business_account_id', 'name', 'language']).doUpdateSet((eb) => ({
            upstream_id: eb.ref('excluded.upstream_id'),
            status: eb.ref('excluded.status'),
            category: eb.ref('excluded.category'),
            parameter_format: eb.ref('excluded.parameter_format'),
            components: eb.ref('excluded.components'),
            parameter_counts: eb.ref('excluded.parameter_counts'),
            status_reason: null,
            status_updated_at: eb.ref('excluded.status_updated_at'),
            category_updated_at: eb.ref('excluded.category_updated_at'),
            removed_at: null,
            synced_at: eb.ref('excluded.synced_at'),
            updated_at: now(),
          })),
        )
        .execute();
    }
    const seen = new Set(templates.map(keyOf));
    const gone = existing.filter((t) => !seen.has(keyOf(t)) && !t.removed_at).map((t) => t.id);
    if (gone.length)
      await db
        .updateTable('templates')
        .set({ removed_at: syncedAt, updated_at: now() })
        .where('business_account_id', '=', businessAccountId)
        .where('id', 'in', gone)
        .execute();
    const added = templates.filter((t) => !known.has(keyOf(t))).length;
    return { added, updated: templates.length - added, removed: gone.length };
  }

  /**
   * Applies Meta's decisions in the caller's transaction, template by template in key order (concurrent
   * chunks lock templates in the same order), oldest first. A template never synced has nothing to update.
   */
  async applyDecisions(tx: Tx, decisions: TemplateDecision[]): Promise<void> {
    const key = (d: TemplateDecision) => `${d.wabaId}\u0000${d.name}\u0000${d.language}`;
    const ordered = [...decisions].sort((a, b) =>
      key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.at.getTime() - b.at.getTime(),
    );
    for (const d of ordered) {
      const template = { wabaId: d.wabaId, name: d.name, language: d.language, at: d.at };
      if (d.status !== undefined)
        await this.db.exec(decide, { ...template, status: d.status, reason: d.reason ?? null }, tx);
      else if (d.category !== undefined) await this.db.exec(recategorise, { ...template, category: d.category }, tx);
      else if (d.qualityScore !== undefined)
        await this.db.exec(requalify, { ...template, qualityScore: d.qualityScore }, tx);
    }
  }

  /** One of the account's templates by our id (removed or not), or undefined. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2] })
  async get(businessAccountId: string, id: string): Promise<Template | undefined> {
    return this.db
      .on()
      .selectFrom('templates')
      .select(columns.templates)
      .where('business_account_id', '=', businessAccountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * A template Meta has just accepted for review (created through the API): stored as Meta answered (usually
   * PENDING), its status decided at `at`, so Meta's review webhook (at or after it) applies. A removed template of
   * the same name and language is replaced.
   */
  @GenerateSql({
    params: [Sample.UUID, SAMPLE_TEMPLATE, Sample.DATE],
  })
  async insertCreated(businessAccountId: string, t: SyncedTemplate, at: Date): Promise<Template> {
    const values = {
      upstream_id: t.upstreamId,
      status: t.status,
      category: t.category,
      parameter_format: t.parameterFormat,
      components: JSON.stringify(t.components),
      parameter_counts: JSON.stringify(t.parameterCounts),
      status_reason: null,
      status_updated_at: at,
      category_updated_at: at,
      quality_score: null,
      quality_updated_at: null,
      removed_at: null,
      synced_at: at,
      updated_at: now(),
    };
    return this.db
      .on()
      .insertInto('templates')
      .values({
        id: randomUUID(),
        business_account_id: businessAccountId,
        name: t.name,
        language: t.language,
        ...values,
      })
      .onConflict((oc) => oc.columns(['business_account_id', 'name', 'language']).doUpdateSet(values))
      .returning(columns.templates)
      .executeTakeFirstOrThrow();
  }

  /** An edit Meta accepted: the new components and/or category, and PENDING again (Meta reviews it again) as of `at`. */
  @GenerateSql(
    { name: 'no change', params: [Sample.UUID, Sample.UUID2, {}, Sample.DATE] },
    {
      name: 'every change',
      params: [
        Sample.UUID,
        Sample.UUID2,
        {
          components: [],
          parameterCounts: { header: 0, body: 1, buttons: {}, names: { header: [], body: [] } },
          category: 'MARKETING',
        },
        Sample.DATE,
      ],
    },
  )
  async markEdited(
    businessAccountId: string,
    id: string,
    change: { components?: UpstreamTemplateComponent[]; parameterCounts?: ParameterCounts; category?: string },
    at: Date,
  ): Promise<Template | undefined> {
    return this.db
      .on()
      .updateTable('templates')
      .set({
        ...(change.components !== undefined
          ? {
              components: JSON.stringify(change.components),
              parameter_counts: JSON.stringify(change.parameterCounts),
            }
          : {}),
        ...(change.category !== undefined ? { category: change.category, category_updated_at: at } : {}),
        status: 'PENDING',
        status_reason: null,
        status_updated_at: at,
        updated_at: now(),
      })
      .where('business_account_id', '=', businessAccountId)
      .where('id', '=', id)
      .returning(columns.templates)
      .executeTakeFirst();
  }

  /** Deleted at Meta: kept, marked removed (as a sync marks templates Meta no longer lists). */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async markRemoved(businessAccountId: string, id: string, at: Date): Promise<Template | undefined> {
    return this.db
      .on()
      .updateTable('templates')
      .set({ removed_at: at, updated_at: now() })
      .where('business_account_id', '=', businessAccountId)
      .where('id', '=', id)
      .returning(columns.templates)
      .executeTakeFirst();
  }

  /** The send path's read (a named prepared statement: it runs on every cache miss of a send); null when never synced. */
  async sendState(businessAccountId: string, name: string, language: string): Promise<TemplateSendState | null> {
    const { rows } = await this.db.exec(sendState, { businessAccountId, name, language });
    const row = rows[0];
    if (!row) return null;
    const { components, ...state } = row;
    return { ...state, otpType: otpTypeOf(components) };
  }

  /** The languages a template is synced in (not removed). */
  async languagesOf(businessAccountId: string, name: string): Promise<string[]> {
    const { rows } = await this.db.exec(languages, { businessAccountId, name });
    return rows.map((r) => r.language);
  }
}

/** The otp_type of the first OTP button of a template's components (an authentication template's), if any. */
function otpTypeOf(components: JsonValue): string | null {
  for (const component of Array.isArray(components) ? components : []) {
    const buttons = isObject(component) ? component.buttons : undefined;
    for (const button of Array.isArray(buttons) ? buttons : []) {
      if (isObject(button) && button.type === 'OTP')
        return typeof button.otp_type === 'string' ? button.otp_type : null;
    }
  }
  return null;
}

function isObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
