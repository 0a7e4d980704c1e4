import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built entry point (./scripts/test.sh builds dist/ before the tests) with exactly `env` and `args`. */
export function runBuilt(entry: string, env: Record<string, string>, timeoutMs = 20_000, args: string[] = []): Promise<Exit> {
  if (!existsSync(entry)) throw new Error(`${entry} is not built: run npm run build (./scripts/test.sh does)`);
  return new Promise((resolve, reject) => {
    // ENV_FILE=none: no .env of the working copy fills in anything.
    const child = spawn(process.execPath, [entry, ...args], { env: { PATH: process.env.PATH ?? '', ENV_FILE: 'none', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
