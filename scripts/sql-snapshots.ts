// Writes the SQL of every statement the repositories run to a checked-in file beside the module that defines it:
// src/<feature>/queries/<module>.sql, laid out one clause a line. Two kinds of blocks, in definition order:
// - each statement defined with prepared()/preparedByShape() (src/core/db/statement.ts), headed by its name;
// - each call of a @GenerateSql sample (src/core/db/generate-sql.ts) of a repository method that builds its SQL per
//   call, headed `Class.method` (and the sample's name): the method runs on a Db that records every statement it
//   sends and answers no rows, or the sample's `rows` (scripts/lib/recording-db.ts); one that gives up on the empty
//   answer (NotFound, say) still shows what it ran before, and the block says where it stopped.
// Reviewers read SQL diffs in a pull request instead of working the builders out in their heads. `npm run db:sql`
// writes them; `--check` (./scripts/test.sh, so CI) fails when one is stale, missing or left over, and when a
// repository method that builds SQL per call (`this.db.on(`, `this.db.run(`, itself or through a private method of
// its class) has no @GenerateSql. Immich's @GenerateSql does the same for its repositories.
// `--src <dir>`: snapshot another tree (test/scripts/sql-snapshots.spec.ts), its parent standing for the repository.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import type { GeneratedSqlMethod } from '../src/core/db/generate-sql.js';
import { RecordingDb, type Recorded } from './lib/recording-db.js';

const srcArg = process.argv.indexOf('--src');
const OWN_SRC = fileURLToPath(new URL('../src', import.meta.url));
const SRC = srcArg > 0 ? path.resolve(process.argv[srcArg + 1]!) : OWN_SRC;
const root = path.dirname(SRC);
const check = process.argv.includes('--check');

/** Every .ts module under `dir` (not a spec, not the web console) whose text matches `pattern`. */
function modulesMatching(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'web' ? [] : modulesMatching(p, pattern);
    if (!e.name.endsWith('.ts') || e.name.endsWith('.spec.ts') || /core\/db\/(statement|generate-sql)\.ts$/.test(p))
      return [];
    return pattern.test(readFileSync(p, 'utf8')) ? [p] : [];
  });
}

/** Every .ts module that defines statements (by its text: no module runs before it is imported). */
const definingModules = (dir: string) => modulesMatching(dir, /\bprepared(ByShape)?\(/);

/** A statement built per call: the repository's Kysely (`this.db.on(`) or a built statement run (`this.db.run(`). */
const PER_CALL = /this\.db\s*\.\s*(on|run)\(/;

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

/**
 * The methods of the classes of `file` that build SQL per call (PER_CALL in their body, or a call of a private method
 * of their class that does) and are not private, without a @GenerateSql: `Class.method` each.
 */
function undecorated(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  source.forEachChild(function visit(node): void {
    if (!ts.isClassDeclaration(node)) return node.forEachChild(visit);
    const methods = node.members.filter(ts.isMethodDeclaration).map((m) => ({
      name: m.name.getText(source),
      text: m.body?.getText(source) ?? '',
      hidden: ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword) ?? false,
      marked: ts.getDecorators(m)?.some((d) => /^GenerateSql\b/.test(d.expression.getText(source))) ?? false,
    }));
    const reaches = new Set(methods.filter((m) => PER_CALL.test(m.text)).map((m) => m.name));
    for (let grew = true; grew;) {
      grew = false;
      for (const m of methods)
        if (!reaches.has(m.name) && [...reaches].some((r) => m.text.includes(`this.${r}(`))) {
          reaches.add(m.name);
          grew = true;
        }
    }
    for (const m of methods)
      if (reaches.has(m.name) && !m.hidden && !m.marked) found.push(`${node.name?.text ?? '?'}.${m.name}`);
  });
  return found;
}

/** One block of a statement: its name (a named prepared statement's) and its text, one clause a line. */
function block(r: Recorded): string {
  return `${r.name ? `-- ${r.name}\n` : ''}${layOut(r.text)};\n`;
}

/** The blocks of every @GenerateSql sample of the classes `file` exports, by calling each on a RecordingDb. */
async function sampleBlocks(
  file: string,
  generatedSql: Map<unknown, GeneratedSqlMethod[]>,
): Promise<{ blocks: string[]; statements: number }> {
  const blocks: string[] = [];
  let statements = 0;
  const exported = Object.entries((await import(pathToFileURL(file).href)) as Record<string, unknown>);
  for (const [className, cls] of exported) {
    const methods = generatedSql.get(cls);
    if (!methods) continue;
    const db = new RecordingDb();
    const repository = new (cls as new (db: unknown) => Record<string, (...args: unknown[]) => Promise<unknown>>)(
      db.asDb,
    );
    for (const { method, samples } of methods)
      for (const sample of samples) {
        const heading = `-- ${className}.${method}${sample.name ? ` (${sample.name})` : ''}`;
        let stopped = '';
        db.answer(sample.rows ?? []);
        try {
          await repository[method]!(...sample.params);
        } catch (error) {
          // A method may give up on the empty answers (NotFound, Kysely's NoResultError): what it ran before stays.
          // A programming error is not an answer: it stops the script.
          if (error instanceof TypeError || error instanceof ReferenceError) throw error;
          const answer = sample.rows?.length ? 'the sample’s rows' : 'the empty answer';
          stopped = `-- (stops here on ${answer}: ${(error as Error).constructor.name})\n`;
        }
        // Statements started alongside the one that failed (Promise.all) reach the driver on the next turns.
        await new Promise((resolve) => setImmediate(resolve));
        const ran = db.take();
        if (ran.length === 0)
          throw new Error(`${heading.slice(3)} ran no statement: give it a sample that reaches its SQL`);
        statements += ran.length;
        blocks.push(`${heading}\n${ran.map(block).join('\n')}${stopped}`);
      }
  }
  if (blocks.length === 0) throw new Error(`${file}: @GenerateSql on no method of an exported class`);
  return { blocks, statements };
}

async function main(): Promise<number> {
  const { definedStatements } = (await import(pathToFileURL(path.join(OWN_SRC, 'core/db/statement.ts')).href)) as {
    definedStatements: { name: string; file: string; text(): string }[];
  };
  const { generatedSql } = (await import(pathToFileURL(path.join(OWN_SRC, 'core/db/generate-sql.ts')).href)) as {
    generatedSql: Map<unknown, GeneratedSqlMethod[]>;
  };
  const before = definedStatements.length;
  for (const m of definingModules(SRC)) await import(pathToFileURL(m).href);
  const ours = definedStatements.slice(srcArg > 0 ? before : 0);
  const byFile = new Map<string, string[]>();
  const add = (file: string, blocks: string[]) => byFile.set(file, [...(byFile.get(file) ?? []), ...blocks]);
  for (const s of ours) {
    const file = s.file.startsWith(SRC) ? s.file : s.file.replace(/^.*?\/src\//, `${SRC}/`).replace(/\.js$/, '.ts');
    add(file, [`-- ${s.name}\n${layOut(s.text())};\n`]);
  }
  let count = ours.length;
  let methods = 0;
  for (const file of modulesMatching(SRC, /@GenerateSql\(/)) {
    const { blocks, statements } = await sampleBlocks(file, generatedSql);
    add(file, blocks);
    count += statements;
    methods += blocks.length;
  }
  const missing = modulesMatching(SRC, PER_CALL).flatMap((f) =>
    undecorated(f).map((m) => `${path.relative(root, f)}: ${m}`),
  );
  for (const m of missing) console.error(`no @GenerateSql: ${m} builds SQL per call`);
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
  const summary = `${count} statements (${methods} method samples) in ${wanted.size} files`;
  if (missing.length > 0) console.error('Mark each with @GenerateSql (src/core/db/generate-sql.ts) and its samples.');
  if (check) {
    for (const f of [...stale, ...leftOver]) console.error(`stale: ${path.relative(root, f)}`);
    if (stale.length + leftOver.length > 0) {
      console.error('SQL snapshots are out of date: run `npm run db:sql` and commit the queries/*.sql files.');
      return 1;
    }
    if (missing.length > 0) return 1;
    console.log(`SQL snapshots up to date (${summary}).`);
    return 0;
  }
  for (const f of stale) {
    mkdirSync(path.dirname(f), { recursive: true });
    writeFileSync(f, wanted.get(f)!);
  }
  for (const f of leftOver) rmSync(f);
  console.log(`wrote ${stale.length} and removed ${leftOver.length} SQL snapshot files: ${summary}`);
  // Writing still succeeds (dev.sh runs it before starting): the methods named above fail --check, so CI.
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
