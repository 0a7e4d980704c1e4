import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/**
 * `npm start` / `npm run start:worker` read the same `.env` as dev.sh: the file named by ENV_FILE, or `.env`
 * in the working directory when there is one. A variable already set in the environment always wins over
 * the file (node's own .env parser). Nothing happens without a file (containers pass their
 * configuration as environment variables) or with ENV_FILE=none (the benches and the fault suite, which
 * give every variable themselves).
 */
export function loadEnvFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.ENV_FILE === 'none') return undefined;
  const file = env.ENV_FILE || '.env';
  if (!existsSync(file)) {
    if (env.ENV_FILE) throw new Error(`ENV_FILE=${env.ENV_FILE}: no such file`);
    return undefined;
  }
  for (const [name, value] of Object.entries(parseEnv(readFileSync(file, 'utf8')))) {
    if (env[name] === undefined) env[name] = value;
  }
  return file;
}
