// The migration files of prisma/migrations, read and applied without Prisma: for benches that need a database of
// an earlier shape (the migrations before a given one) and time a migration statement by statement.
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { ROOT } from '../../scripts/stack/app.js';

export const MIGRATIONS_DIR = path.join(ROOT, 'prisma', 'migrations');

/** The migration folders in the order Prisma applies them (by name), each with its migration.sql. */
export function migrationFolders(): { name: string; file: string }[] {
  return fs
    .readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(MIGRATIONS_DIR, d.name, 'migration.sql')))
    .map((d) => ({ name: d.name, file: path.join(MIGRATIONS_DIR, d.name, 'migration.sql') }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The folders before `name` (that one excluded, and everything after it). */
export function migrationsBefore(name: string): { name: string; file: string }[] {
  const all = migrationFolders();
  if (!all.some((m) => m.name === name)) throw new Error(`no migration ${name} in ${MIGRATIONS_DIR}`);
  return all.filter((m) => m.name < name);
}

/**
 * Applies each file as one simple query (one implicit transaction per file, as prisma/migrate.ts does: the whole
 * script in one round trip).
 */
export async function applyMigrationFiles(db: pg.Client | pg.PoolClient, files: { file: string }[]): Promise<void> {
  for (const m of files) await db.query(fs.readFileSync(m.file, 'utf8'));
}

/**
 * Splits a migration script into its statements, for timing them one by one (in one explicit transaction, which
 * is what the whole script as one simple query amounts to). Knows -- and block comments, '…' and "…" literals and
 * $tag$ … $tag$ bodies; each statement is returned with the comment lines that precede it stripped.
 */
export function splitSql(script: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = script.length;
  while (i < n) {
    const c = script[i]!;
    if (c === '-' && script[i + 1] === '-') {
      const end = script.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && script[i + 1] === '*') {
      const end = script.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < n) {
        if (script[j] === c && script[j + 1] === c) j += 2;
        else if (script[j] === c) break;
        else j++;
      }
      i = j + 1;
    } else if (c === '$') {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(script.slice(i, i + 64));
      if (m) {
        const end = script.indexOf(m[0], i + m[0].length);
        i = end < 0 ? n : end + m[0].length;
      } else i++;
    } else if (c === ';') {
      out.push(script.slice(start, i + 1));
      i++;
      start = i;
    } else i++;
  }
  out.push(script.slice(start));
  return out.map(stripLeadingComments).filter((s) => s.replace(/;$/, '').trim() !== '');
}

function stripLeadingComments(stmt: string): string {
  const lines = stmt.split('\n');
  while (lines.length && (lines[0]!.trim() === '' || lines[0]!.trim().startsWith('--'))) lines.shift();
  return lines.join('\n').trim();
}

/** The first line of a statement, shortened: a label for timings. */
export function statementLabel(stmt: string, max = 110): string {
  const line = stmt.split('\n')[0]!.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
