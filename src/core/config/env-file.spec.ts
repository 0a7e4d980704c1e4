import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadEnvFile } from './env-file.js';

describe('loadEnvFile (npm start reads .env)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'env-file-'));
  const file = path.join(dir, 'app.env');
  writeFileSync(file, 'ENV_FILE_TEST_A=from-file\nENV_FILE_TEST_B=from-file\n');

  it('fills in what the environment does not set, and never overrides what it does', () => {
    const env: NodeJS.ProcessEnv = { ENV_FILE: file, ENV_FILE_TEST_A: 'given' };
    expect(loadEnvFile(env)).toBe(file);
    expect(env).toEqual({ ENV_FILE: file, ENV_FILE_TEST_A: 'given', ENV_FILE_TEST_B: 'from-file' });
  });

  it('reads nothing with ENV_FILE=none, and refuses a named file that does not exist', () => {
    const env: NodeJS.ProcessEnv = { ENV_FILE: 'none' };
    expect(loadEnvFile(env)).toBeUndefined();
    expect(env).toEqual({ ENV_FILE: 'none' });
    expect(() => loadEnvFile({ ENV_FILE: path.join(dir, 'missing.env') })).toThrow('no such file');
  });
});
