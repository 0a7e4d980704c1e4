import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadEnvFile } from '../../core/config/env-file.js';
import { loadConfigOrExit } from '../../core/config/load-config.js';
import { OperatorsRepository } from './operators.repository.js';
import { PlatformAdminModule } from './platform-admin.module.js';

const USAGE = 'usage: npm run platform-admin -- grant <email> | revoke <email> | list';

/**
 * `npm run platform-admin -- grant <email>` (after `npm run build`): the only way to make an operator a
 * platform administrator (Bull Board at /console/queues). Out of band on purpose: it needs the database's
 * credentials, so no email anyone can register or be invited with grants anything. The operator must exist
 * (sign up first); the change applies to its next request, its sessions included.
 */
async function main(args: string[]): Promise<void> {
  const [command, rawEmail] = args;
  const email = rawEmail?.trim().toLowerCase();
  if (!(command === 'list' && !email) && !((command === 'grant' || command === 'revoke') && email)) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  loadEnvFile();
  // It changes one column and never calls the upstream platform: its address is not needed (dev.sh's banner line
  // gives the database and Redis only, and a .env without UPSTREAM_BASE_URL is dev.sh's simulator default).
  const config = loadConfigOrExit({ UPSTREAM_BASE_URL: 'http://upstream.not-used.invalid', ...process.env });
  const app = await NestFactory.createApplicationContext(PlatformAdminModule.forRoot(config), { logger: ['error'] });
  try {
    const operators = app.get(OperatorsRepository);
    if (command === 'list') {
      const admins = await operators.listPlatformAdmins();
      process.stdout.write(admins.length ? `${admins.join('\n')}\n` : 'no platform administrators\n');
    } else if (await operators.setPlatformAdmin(email!, command === 'grant')) {
      process.stdout.write(`${email}: platform administrator ${command === 'grant' ? 'granted' : 'revoked'}\n`);
    } else {
      process.stderr.write(`no operator with the email ${email} (it must sign up first)\n`);
      process.exitCode = 1;
    }
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`platform-admin failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
