import 'reflect-metadata';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import type { ConsoleScope } from '../auth/request-scope.js';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { BusinessAccountsService } from '../accounts/business-accounts/business-accounts.service.js';
import { WebhookSubscription } from '../accounts/business-accounts/webhook-subscription.js';
import { PhoneNumbersService } from '../accounts/phone-numbers/phone-numbers.service.js';
import { TemplatesService } from '../accounts/templates/templates.service.js';
import { ApiKeysRepository } from '../auth/api-keys/api-keys.repository.js';
import { ApiKeysService } from '../console/api-keys/api-keys.service.js';
import { OperatorsRepository } from '../console/operators/operators.repository.js';
import { OperatorsService } from '../console/operators/operators.service.js';
import { loadConfigOrExit } from '../core/config/load-config.js';
import { stderrDestination } from '../core/logging/logger.js';
import { ConversationWindowsRepository } from '../messages/conversation-windows.repository.js';

/**
 * Demo data for local development (`npm run db:seed`, run by ./scripts/dev.sh): a demo operator, and when
 * SEED_WABA_ID / SEED_ACCESS_TOKEN are given (dev.sh gives the simulator's first account) that business
 * account connected, its numbers and templates synced, and an API key pair. Idempotent: a second run reuses
 * what exists. Goes through the same services as the console, so the data is exactly what a user would make.
 *
 * With the simulator (SEED_SIMULATOR_URL, given by dev.sh), the example customer also writes to the demo
 * number (an inbound message through the simulator, the worker and the webhook path, as Meta would), which
 * opens the 24 h customer service window that every session-message example of Swagger and the README needs;
 * renewed on every run when it is older than an hour. Needs the API and the worker running.
 *
 * Seed-only settings (read here, not by the service): SEED_EMAIL, SEED_PASSWORD, SEED_WABA_ID,
 * SEED_ACCESS_TOKEN, SEED_KEY_FILE (where the demo key pair is kept so later runs can show it again),
 * SEED_SIMULATOR_URL (the simulator's control endpoints, `http://127.0.0.1:4010`).
 */
async function seed(): Promise<void> {
  const config = loadConfigOrExit();
  const env = process.env;
  const email = env.SEED_EMAIL ?? 'demo@example.com';
  const password = env.SEED_PASSWORD ?? 'demo-password-123';
  // stdout carries the result (dev.sh parses it): the service's log lines (an upstream call, say) go to stderr.
  const app = await NestFactory.createApplicationContext(
    AppModule.forRoot(config, { logDestination: stderrDestination() }),
    { logger: ['error'] },
  );
  try {
    const operators = app.get(OperatorsRepository);
    if (!(await operators.findByEmail(email))) {
      await app.get(OperatorsService).createOrganization({ email, password, organizationName: 'Demo Org' });
    }
    const operator = (await operators.findByEmail(email))!;
    const scope: ConsoleScope = {
      operatorId: operator.id,
      organizationId: operator.organizationId,
      email,
      sessionId: 'seed',
      role: 'owner',
      platformAdmin: false,
    };
    const result: Record<string, unknown> = { consoleLogin: { email, password } };

    const wabaId = env.SEED_WABA_ID;
    const accessToken = env.SEED_ACCESS_TOKEN;
    if (wabaId && accessToken) {
      const existing = await app.get(BusinessAccountsRepository).findAnyByWabaId(wabaId);
      if (!existing || existing.disconnectedAt)
        await app.get(BusinessAccountsService).connect(scope, { wabaId, accessToken });
      // An account connected before webhook subscriptions were made on connect (an older local database).
      else if (!existing.webhooksSubscribed) await app.get(WebhookSubscription).resubscribe(scope, wabaId);
      await app.get(PhoneNumbersService).sync(scope, wabaId);
      const numbers = await app.get(PhoneNumbersService).list(scope.organizationId, wabaId, { page: 1, limit: 100 });
      const templates = await app.get(TemplatesService).sync(scope, wabaId);
      result.businessAccount = {
        wabaId,
        phoneNumbers: numbers.items.map((n) => `${n.phoneNumberId} ${n.status}`),
        templates: templates.counts,
      };
      result.apiKey = await demoKey(
        app.get(ApiKeysService),
        app.get(ApiKeysRepository),
        scope,
        wabaId,
        env.SEED_KEY_FILE,
      );
      const number = numbers.items.find((n) => n.status === 'CONNECTED');
      if (env.SEED_SIMULATOR_URL && number) {
        result.customerWindow = await openExampleWindow(
          app.get(ConversationWindowsRepository),
          env.SEED_SIMULATOR_URL,
          wabaId,
          number.phoneNumberId,
        );
      }
    }
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await app.close();
  }
}

/** The customer of every example (`to` and `userId` of Swagger's POST /messages examples and the README). */
const EXAMPLE_CUSTOMER = { phone: '447700900123', userId: 'US.13491208655302741918' };
const WINDOW_RENEWED_AFTER_MS = 60 * 60 * 1000;

/** The example customer writes to the number (through the simulator), unless it did within the hour; waits for the worker. */
async function openExampleWindow(
  windows: ConversationWindowsRepository,
  simulatorUrl: string,
  wabaId: string,
  phoneNumberId: string,
): Promise<string> {
  const opened = async () => {
    const at = await Promise.all([
      windows.lastInboundAt(phoneNumberId, EXAMPLE_CUSTOMER.phone),
      windows.lastInboundAt(phoneNumberId, EXAMPLE_CUSTOMER.userId),
    ]);
    return at.every((d) => d && Date.now() - d.getTime() < WINDOW_RENEWED_AFTER_MS)
      ? new Date(Math.min(...at.map((d) => d!.getTime())))
      : null;
  };
  let since = await opened();
  if (!since) {
    const res = await fetch(`${simulatorUrl}/_sim/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        wabaId,
        phoneNumberId,
        from: EXAMPLE_CUSTOMER.phone,
        userId: EXAMPLE_CUSTOMER.userId,
        name: 'Priya Shah',
        text: 'Hi! Where is my parcel?',
      }),
    });
    if (!res.ok)
      throw new Error(`the simulator refused the example customer's message: ${res.status} ${await res.text()}`);
    for (let i = 0; i < 100 && !since; i++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      since = await opened();
    }
  }
  if (!since)
    return `not open: the worker did not store ${EXAMPLE_CUSTOMER.phone}'s message within 15 s (is it running?)`;
  return `${EXAMPLE_CUSTOMER.phone} / ${EXAMPLE_CUSTOMER.userId} may get any message type until ${new Date(since.getTime() + 24 * 3600 * 1000).toISOString()}`;
}

async function demoKey(
  keys: ApiKeysService,
  stored: ApiKeysRepository,
  scope: ConsoleScope,
  wabaId: string,
  file?: string,
) {
  if (file && existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { accessKey: string; secretKey: string; wabaId: string };
    const key = await stored.findForAuthentication(saved.accessKey);
    if (key && !key.revokedAt && key.businessAccount.wabaId === wabaId && key.organizationId === scope.organizationId)
      return saved;
  }
  const created = await keys.create(scope, wabaId, 'demo key (seed)');
  const saved = { accessKey: created.accessKey, secretKey: created.secretKey, wabaId };
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
  }
  return saved;
}

seed().catch((error: unknown) => {
  process.stderr.write(`seed failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
