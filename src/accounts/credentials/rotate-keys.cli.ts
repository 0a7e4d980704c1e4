import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '../../core/config/app-config.js';
import { loadEnvFile } from '../../core/config/env-file.js';
import { loadConfigOrExit } from '../../core/config/load-config.js';
import { CoreModule } from '../../core/core.module.js';
import { AuthModule } from '../../auth/auth.module.js';
import { AccountsModule } from '../accounts.module.js';
import { CredentialRotation } from './credential-rotation.js';

@Module({})
class KeyRotationModule {
  static forRoot(config: AppConfig): DynamicModule {
    // AccountsModule's services reach the (global) auth module: disconnecting an account drops its keys.
    return { module: KeyRotationModule, imports: [CoreModule.forRoot(config, 'worker'), AuthModule, AccountsModule] };
  }
}

/**
 * `npm run keys:rotate` (after `npm run build`): re-seals every stored upstream token under the newest key
 * of ENCRYPTION_KEYS. Rotation: put the new key first (`ENCRYPTION_KEYS=k2:<new>,k1:<old>`), deploy, run
 * this, then drop the old key. Exits 1 if any token could not be opened (its wabaId is printed).
 */
async function rotate(): Promise<void> {
  // Like npm start: .env (or ENV_FILE) fills in what the environment does not set.
  loadEnvFile();
  const config = loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(KeyRotationModule.forRoot(config), { logger: ['error'] });
  try {
    const newest = config.encryptionKeys[0]!.id;
    process.stdout.write(`re-sealing upstream tokens under key "${newest}"…\n`);
    const result = await app.get(CredentialRotation).rotateAll((p) => {
      process.stdout.write(
        `  ${p.seen}/${p.total} accounts: ${p.rotated} re-sealed, ${p.skipped} changed meanwhile, ${p.failed.length} failed\n`,
      );
    });
    process.stdout.write(
      `done: ${result.rotated} re-sealed, ${result.seen - result.rotated - result.skipped - result.failed.length} already current, ${result.skipped} changed meanwhile\n`,
    );
    if (result.failed.length > 0) {
      process.stderr.write(`no key of ENCRYPTION_KEYS opens the token of: ${result.failed.join(', ')}\n`);
      process.exitCode = 1;
    }
  } finally {
    await app.close();
  }
}

rotate().catch((error: unknown) => {
  process.stderr.write(`key rotation failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
