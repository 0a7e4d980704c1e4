// Writes the SQL of every statement defined with prepared()/preparedByShape() (src/core/db/statement.ts) to a checked-in
// file beside the module that defines it: src/<feature>/queries/<module>.sql, one block per statement in definition
// order, laid out one clause a line. Reviewers read SQL diffs in a pull request instead of working the builders out
// in their heads. `npm run db:sql` writes them; `--check` (./scripts/test.sh, so CI) fails when one is stale, missing
// or left over. Immich's @GenerateSql does the same for its repositories.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(root, 'src');
const check = process.argv.includes('--check');

/** Every .ts module under src that defines statements (by its text: no module runs before it is imported). */
function definingModules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'web' ? [] : definingModules(p);
    if (!e.name.endsWith('.ts') || e.name.endsWith('.spec.ts') || p.endsWith('core/db/statement.ts')) return [];
    return /\bprepared(ByShape)?\(/.test(readFileSync(p, 'utf8')) ? [p] : [];
  });
}

const KEYWORDS = [
  'with',
  'select',
  'from',
  'inner join',
  'left join',
  'cross join',
  'join',
  'where',
  'group by',
  'having',
  'order by',
  'limit',
  'offset',
  'for update',
  'insert into',
  'values',
  'on conflict',
  'do update set',
  'update',
  'set',
  'delete from',
  'returning',
  'union all',
  'union',
];

/** One clause a line, indented by the depth of parentheses it sits in; quoted text and identifiers kept as they are. */
export function layOut(sqlText: string): string {
  const out: string[] = [];
  let line = '';
  let depth = 0;
  let i = 0;
  const lower = sqlText.toLowerCase();
  const startsClause = (at: number) =>
    KEYWORDS.find(
      (k) =>
        lower.startsWith(k, at) &&
        (at === 0 || /[\s(]/.test(sqlText[at - 1]!)) &&
        !/[a-z0-9_]/.test(lower[at + k.length] ?? ' '),
    );
  while (i < sqlText.length) {
    const c = sqlText[i]!;
    if (c === "'" || c === '"') {
      const end = sqlText.indexOf(c, i + 1);
      const stop = end === -1 ? sqlText.length : end + 1;
      line += sqlText.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === '(') depth++;
    if (c === ')') depth = Math.max(0, depth - 1);
    const k = startsClause(i);
    if (k && line.trim() !== '' && line.trim() !== '(') {
      out.push(line.trimEnd());
      line = '  '.repeat(depth);
    }
    line += k ? sqlText.slice(i, i + k.length) : c;
    i += k ? k.length : 1;
  }
  if (line.trim()) out.push(line.trimEnd());
  return out.join('\n');
}

async function main(): Promise<number> {
  const modules = definingModules(SRC);
  const { definedStatements } = (await import(pathToFileURL(path.join(SRC, 'core/db/statement.ts')).href)) as {
    definedStatements: { name: string; file: string; text(): string }[];
  };
  for (const m of modules) await import(pathToFileURL(m).href);
  const byFile = new Map<string, string[]>();
  for (const s of definedStatements) {
    const file = s.file.replace(/^.*?\/src\//, `${SRC}/`).replace(/\.js$/, '.ts');
    const blocks = byFile.get(file) ?? [];
    blocks.push(`-- ${s.name}\n${layOut(s.text())};\n`);
    byFile.set(file, blocks);
  }
  const wanted = new Map<string, string>();
  for (const [file, blocks] of byFile) {
    const out = path.join(path.dirname(file), 'queries', path.basename(file).replace(/\.ts$/, '.sql'));
    const header = `-- The statements of ${path.relative(root, file)}, as PostgreSQL receives them ($n: the run's values).\n-- Written by \`npm run db:sql\` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.\n\n`;
    wanted.set(out, header + blocks.join('\n'));
  }
  const present = (function all(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) return all(p);
      return path.basename(dir) === 'queries' && e.name.endsWith('.sql') ? [p] : [];
    });
  })(SRC);
  const stale = [...wanted].filter(([f, text]) => !existsSync(f) || readFileSync(f, 'utf8') !== text).map(([f]) => f);
  const leftOver = present.filter((f) => !wanted.has(f));
  const count = definedStatements.length;
  if (check) {
    for (const f of [...stale, ...leftOver]) console.error(`stale: ${path.relative(root, f)}`);
    if (stale.length + leftOver.length > 0) {
      console.error('SQL snapshots are out of date: run `npm run db:sql` and commit the queries/*.sql files.');
      return 1;
    }
    console.log(`SQL snapshots up to date (${count} statements in ${wanted.size} files).`);
    return 0;
  }
  for (const f of stale) {
    mkdirSync(path.dirname(f), { recursive: true });
    writeFileSync(f, wanted.get(f)!);
  }
  for (const f of leftOver) rmSync(f);
  console.log(
    `wrote ${stale.length} and removed ${leftOver.length} of ${wanted.size} SQL snapshot files (${count} statements)`,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
