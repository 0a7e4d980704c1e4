/**
 * Standalone simulator process: `npx tsx simulator/main.ts` (or `npm run simulator`).
 * Configured by environment only; see simulator/README.md for the variables.
 */
import { DEFAULT_STATUS_DELAYS_MS, startSimulator } from './simulator.js';

function fail(message: string): never {
  console.error(`[simulator] ${message}`);
  process.exit(1);
}

function statusDelays(raw: string | undefined) {
  if (!raw) return DEFAULT_STATUS_DELAYS_MS;
  const parts = raw.split(',').map((p) => Number(p.trim()));
  if (parts.length !== 3 || !parts.every((n) => Number.isInteger(n) && n >= 0)) {
    fail(`SIMULATOR_STATUS_DELAYS_MS must be three non-negative integers "sent,delivered,read" (got "${raw}")`);
  }
  const [sent, delivered, read] = parts;
  return { sent, delivered, read };
}

function onOff(name: string, fallback: boolean): boolean {
  const raw = process.env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  fail(`${name} must be on or off (got "${raw}")`);
}

const appSecret = process.env.WHATSAPP_APP_SECRET;
if (!appSecret) fail('WHATSAPP_APP_SECRET is required (the key webhooks are signed with)');
const port = Number(process.env.SIMULATOR_PORT ?? 4010);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`SIMULATOR_PORT must be a port number`);

const userIds = (process.env.SIMULATOR_USER_IDS?.trim().toLowerCase() || 'off') as 'off' | 'alongside' | 'only';
if (!['off', 'alongside', 'only'].includes(userIds))
  fail(`SIMULATOR_USER_IDS must be off, alongside or only (got "${userIds}")`);

const sim = await startSimulator({
  port,
  host: process.env.SIMULATOR_HOST || '127.0.0.1',
  appSecret,
  webhookUrl: process.env.SIMULATOR_WEBHOOK_URL || undefined,
  statusDelaysMs: statusDelays(process.env.SIMULATOR_STATUS_DELAYS_MS),
  webhooksEnabled: onOff('SIMULATOR_WEBHOOKS', true),
  userIds,
});
const receiver = process.env.SIMULATOR_WEBHOOK_URL;
const webhooks = receiver ? `webhooks to ${receiver}` : 'no webhook receiver';
console.log(`WhatsApp Cloud API simulator ready at ${sim.baseUrl} (${webhooks})`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
}
