import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Database } from './database.js';

type Eb<TB extends keyof Database> = ExpressionBuilder<Database, TB>;

/** One condition of a list filter, in the statement when its value is given. */
export interface Condition<TB extends keyof Database> {
  letter: string;
  where: ((eb: Eb<TB>) => Expression<SqlBool>) | undefined;
}

/**
 * A condition that is in the statement when `given` is defined; `letter` stands for it in the statement's name.
 * `where` takes its value from the statement's parameters (a placeholder of `preparedByShape`), not from `given`.
 */
export function when<TB extends keyof Database>(
  letter: string,
  given: unknown,
  where: (eb: Eb<TB>) => Expression<SqlBool>,
): Condition<TB> {
  return { letter, where: given === undefined ? undefined : where };
}

/** The WHERE of a list or feed, and a name per shape (the filters present) for its prepared statements. */
export interface Filter<TB extends keyof Database> {
  where: (eb: Eb<TB>) => Expression<SqlBool>;
  /** One letter per filter present (`all` when none): statements of one shape share a prepared statement. */
  shape: string;
}

/** `scope` (the tenant condition, always first) AND each condition present. */
export function filterOf<TB extends keyof Database>(
  scope: (eb: Eb<TB>) => Expression<SqlBool>,
  conditions: Condition<TB>[],
): Filter<TB> {
  const present = conditions.flatMap((c) => (c.where ? [{ letter: c.letter, where: c.where }] : []));
  return {
    where: (eb) => eb.and([scope(eb), ...present.map((c) => c.where(eb))]),
    shape: present.map((c) => c.letter).join('') || 'all',
  };
}
