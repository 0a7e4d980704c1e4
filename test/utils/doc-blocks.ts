import { readFileSync } from 'node:fs';

/**
 * The shell blocks of a Markdown guide, run as printed (test/e2e/docs-guides.e2e-spec.ts): every ```bash / ```sh /
 * ```shell fence, in page order, all of a page's blocks in one bash (a variable set in one block is there in the next).
 *
 * - Expected output: one or more consecutive `# → …` lines after a command are what the commands since the previous
 *   `# →` (or the block's start) print, in full; `…` stands for anything (ids, times, more lines).
 * - Every HTTP answer of those commands is 2xx or 3xx, unless its status is in the expected output (a page showing a
 *   422 says so: `# → {"statusCode":422,…}`).
 * - A block that cannot run against a local instance (it starts one, or needs Meta's real servers) is marked: the
 *   fence ```` ```bash no-run: <why> ```` or a `<!-- no-run: <why> -->` line just above it. The runner counts them
 *   and says why.
 */
export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** Why it is not run (a no-run mark), or undefined when it runs. */
  noRun?: string;
}

export interface DocCheck {
  /** 1-based line of the (first) `# →` line. */
  line: number;
  expected: string;
}

const SHELL = new Set(['bash', 'sh', 'shell']);

/** The shell blocks of a Markdown text. */
export function shellBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const close = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    const end = close < 0 ? lines.length : close;
    const [lang, info] = [open[1]!.toLowerCase(), open[2]!.trim()];
    if (SHELL.has(lang)) {
      const previous = lines
        .slice(0, i)
        .reverse()
        .find((l) => l.trim() !== '');
      const comment = previous ? /^<!--\s*no-run\b:?\s*(.*?)\s*-->$/.exec(previous.trim()) : null;
      const fence = /^no-run\b:?\s*(.*)$/.exec(info);
      const noRun = fence ? fence[1] || 'no reason given' : comment ? comment[1] || 'no reason given' : undefined;
      blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n'), noRun });
    }
    i = end;
  }
  return blocks;
}

export function pageBlocks(file: string): DocBlock[] {
  return shellBlocks(readFileSync(file, 'utf8'));
}

/**
 * One bash script for a page's runnable blocks: after each group of commands that a `# →` follows, a marker on stdout
 * and stderr (`@@check <n>`), so the output of each group is told apart; curl writes each answer's status to stderr
 * (`@@http <status> <method> <url>`).
 */
export function pageScript(blocks: DocBlock[]): { script: string; checks: DocCheck[] } {
  const checks: DocCheck[] = [];
  const out: string[] = [
    'set -euo pipefail',
    // `command curl` so the page's own options come last (and win); %{stderr} keeps stdout what the page shows.
    `curl() { command curl -w '%{stderr}@@http %{http_code} %{method} %{url_effective}\\n' "$@"; }`,
  ];
  // After the group of check n (the last one pushed).
  const mark = () => {
    const n = checks.length - 1;
    out.push(`echo '@@check ${n}'; echo '@@check ${n}' >&2`);
  };
  for (const block of blocks) {
    const lines = block.code.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const arrow = /^\s*# →\s?(.*)$/.exec(lines[i]!);
      if (!arrow) {
        out.push(lines[i]!);
        continue;
      }
      const expected = [arrow[1]!];
      const line = block.line + 1 + i;
      while (i + 1 < lines.length && /^\s*# →/.test(lines[i + 1]!))
        expected.push(/^\s*# →\s?(.*)$/.exec(lines[++i]!)![1]!);
      checks.push({ line, expected: expected.join('\n') });
      mark();
    }
    // The end of a block closes a group too (its output is only checked for HTTP errors).
    checks.push({ line: block.line, expected: '' });
    mark();
  }
  return { script: out.join('\n'), checks };
}

/** `expected` as a pattern: `…` is anything, runs of white space are optional white space, the rest is literal. */
function pattern(expected: string): RegExp {
  const parts = expected
    .trim()
    .split('…')
    .map((p) =>
      p
        .split(/\s+/)
        .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('\\s*'),
    );
  return new RegExp(`^${parts.join('[\\s\\S]*?')}$`);
}

/** Splits a stream at the `@@check <n>` markers: the text before marker n is group n's. */
function groups(stream: string): Map<number, string> {
  const byCheck = new Map<number, string>();
  let text: string[] = [];
  for (const line of stream.split('\n')) {
    const marker = /^@@check (\d+)$/.exec(line);
    if (marker) {
      byCheck.set(Number(marker[1]), text.join('\n'));
      text = [];
    } else text.push(line);
  }
  return byCheck;
}

/** What went wrong in a page's run, one line each (empty when it ran as printed). */
export function pageFailures(
  file: string,
  checks: DocCheck[],
  run: { code: number | null; stdout: string; stderr: string },
): string[] {
  const failures: string[] = [];
  const stdout = groups(run.stdout);
  const stderr = groups(run.stderr);
  checks.forEach((check, n) => {
    const where = `${file}:${check.line}`;
    if (!stdout.has(n)) return; // not reached: the exit code below says why
    const printed = stdout.get(n)!.trim();
    if (check.expected && !pattern(check.expected).test(printed))
      failures.push(`${where}: expected ${check.expected}\n  printed ${printed || '(nothing)'}`);
    for (const line of stderr.get(n)!.split('\n')) {
      const http = /^@@http (\d{3}) (\S+) (\S+)$/.exec(line);
      if (!http) {
        if (line.trim()) failures.push(`${where}: stderr: ${line}`);
      } else if (Number(http[1]) >= 400 && !check.expected.includes(http[1]!)) {
        failures.push(`${where}: ${http[2]} ${http[3]} answered ${http[1]} (not shown as expected)`);
      }
    }
  });
  if (run.code !== 0) {
    const tail = run.stderr
      .split(/^@@check \d+$/m)
      .pop()!
      .trim();
    failures.push(`${file}: the script exited ${run.code}: ${tail || '(no stderr)'}`);
  }
  return failures;
}
