import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` with exactly `env` (and `cwd`), collecting its output; killed (and rejected) after `timeoutMs`. */
export function runProcess(
  command: string,
  args: string[],
  opts: { env: Record<string, string>; cwd?: string; timeoutMs: number },
): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${command} ${args[0] ?? ''} did not exit within ${opts.timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`,
        ),
      );
    }, opts.timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a built entry point (./scripts/test.sh builds dist/ before the tests) with exactly `env` and `args`. */
export function runBuilt(
  entry: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
  args: string[] = [],
): Promise<Exit> {
  if (!existsSync(entry)) throw new Error(`${entry} is not built: run npm run build (./scripts/test.sh does)`);
  // ENV_FILE=none: no .env of the working copy fills in anything.
  return runProcess(process.execPath, [entry, ...args], {
    env: { PATH: process.env.PATH ?? '', ENV_FILE: 'none', ...env },
    timeoutMs,
  });
}
