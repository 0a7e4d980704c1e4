// The SQL snapshot script (scripts/sql-snapshots.ts, `npm run db:sql`, `--check` in ./scripts/test.sh) on a tree of its
// own (`--src`): a repository whose @GenerateSql method is written to queries/<module>.sql; `--check` failing once that
// method's SQL changes, once a method that builds SQL per call has no @GenerateSql, and once a snapshot is left over.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DB = path.join(ROOT, 'src/core/db');
const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'bmapi-sql-snapshots-'));
const src = path.join(tree, 'src');
const repository = path.join(src, 'things/things.repository.ts');
const snapshot = path.join(src, 'things/queries/things.repository.sql');

afterAll(() => fs.rmSync(tree, { recursive: true, force: true }));

// tsx compiles the tree's files with the tsconfig of the directory it runs in (legacy decorators, as Nest's), as ES
// modules (they share the script's module of @GenerateSql).
fs.writeFileSync(path.join(tree, 'package.json'), JSON.stringify({ type: 'module' }));
fs.writeFileSync(
  path.join(tree, 'tsconfig.json'),
  JSON.stringify({ compilerOptions: { target: 'ES2023', module: 'NodeNext', experimentalDecorators: true } }),
);

/**
 * A repository of the `operators` table: `find` with an optional filter, `count` that gives up on no rows (and goes on
 * when its sample answers rows).
 */
function writeRepository(opts: { orderBy?: string; unmarked?: boolean } = {}): void {
  fs.mkdirSync(path.dirname(repository), { recursive: true });
  fs.writeFileSync(
    repository,
    `import { GenerateSql, Sample } from '${DB}/generate-sql.ts';
import type { Db } from '${DB}/db.ts';

export class ThingsRepository {
  constructor(private readonly db: Db) {}

  @GenerateSql({ name: 'no filter', params: [Sample.UUID] }, { name: 'by email', params: [Sample.UUID, Sample.EMAIL] })
  async find(organizationId: string, email?: string) {
    let q = this.db.on().selectFrom('operators').select('id').where('organization_id', '=', organizationId);
    if (email) q = q.where('email', '=', email);
    return q.orderBy('${opts.orderBy ?? 'created_at'}').execute();
  }

  @GenerateSql({ params: [Sample.UUID] }, { name: 'found', params: [Sample.UUID], rows: [{ id: 1, n: 2 }] })
  async count(organizationId: string) {
    const db = this.db.on();
    await db.selectFrom('organizations').select('id').where('id', '=', organizationId).execute();
    const { n } = await db
      .selectFrom('operators')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return n + (await this.db.on().selectFrom('operators').select('id').execute()).length;
  }
${
  opts.unmarked
    ? `
  async remove(id: string) {
    await this.removing(id);
  }

  private removing(id: string) {
    return this.db.on().deleteFrom('operators').where('id', '=', id).execute();
  }
`
    : ''
}}
`,
  );
}

/** Runs the script on the tree; its exit code and what it printed. */
function snapshots(...args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      path.join(ROOT, 'node_modules/.bin/tsx'),
      [path.join(ROOT, 'scripts/sql-snapshots.ts'), '--src', src, ...args],
      { cwd: tree, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('SQL snapshots of @GenerateSql methods (scripts/sql-snapshots.ts)', () => {
  it('writes each sample’s statements under its method’s name, and passes --check until the SQL changes', async () => {
    writeRepository();
    expect((await snapshots('--check')).code).toBe(1); // no snapshot yet: missing
    expect((await snapshots()).code).toBe(0);
    const written = fs.readFileSync(snapshot, 'utf8');
    expect(written).toContain(
      [
        '-- ThingsRepository.find (no filter)',
        'select "id"',
        'from "operators"',
        'where "organization_id" = $1',
        'order by "created_at";',
        '',
        '-- ThingsRepository.find (by email)',
        'select "id"',
        'from "operators"',
        'where "organization_id" = $1 and "email" = $2',
        'order by "created_at";',
      ].join('\n'),
    );
    // `count` gives up on the empty answer: what it ran before is there, and where it stopped.
    expect(written).toContain(
      [
        '-- ThingsRepository.count',
        'select "id"',
        'from "organizations"',
        'where "id" = $1;',
        '',
        'select count(*) as "n"',
        'from "operators"',
        'where "organization_id" = $1;',
        '-- (stops here on the empty answer: NoResultError)',
        '',
        '-- ThingsRepository.count (found)',
        'select "id"',
        'from "organizations"',
        'where "id" = $1;',
        '',
        'select count(*) as "n"',
        'from "operators"',
        'where "organization_id" = $1;',
        '',
        'select "id"',
        'from "operators";',
        '',
      ].join('\n'),
    );
    expect(await snapshots('--check')).toMatchObject({ code: 0 });

    writeRepository({ orderBy: 'email' });
    const stale = await snapshots('--check');
    expect(stale.code).toBe(1);
    expect(stale.output).toContain('stale: src/things/queries/things.repository.sql');
    expect(fs.readFileSync(snapshot, 'utf8')).toBe(written); // --check writes nothing
  });

  it('fails when a method that builds SQL per call (itself or through a private method) has no @GenerateSql', async () => {
    writeRepository({ unmarked: true });
    await snapshots();
    const result = await snapshots('--check');
    expect(result.code).toBe(1);
    expect(result.output).toContain('no @GenerateSql: src/things/things.repository.ts: ThingsRepository.remove');
    expect(result.output).not.toContain('ThingsRepository.removing');
  });

  it('fails on a snapshot whose module is gone, and the script removes it', async () => {
    writeRepository();
    await snapshots();
    fs.renameSync(repository, path.join(src, 'things/other.ts'));
    expect((await snapshots('--check')).output).toContain('stale: src/things/queries/things.repository.sql');
    expect((await snapshots()).code).toBe(0);
    expect(fs.existsSync(snapshot)).toBe(false);
    expect(fs.existsSync(path.join(src, 'things/queries/other.sql'))).toBe(true);
  });
});
