import fs from 'node:fs';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../../src/generated/prisma/client.js';
const h = JSON.parse(fs.readFileSync('/tmp/bench-scratch/hold.json', 'utf8'));
const named = process.env.NAMED === '1';
const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: h.db, max: 4 }, named ? { statementNameGenerator: (q) => 'p' + Buffer.from(q.sql).toString('base64url').slice(-40) } : {}) });
const pool = new pg.Pool({ connectionString: h.db, max: 4 });
const N = 2000;
async function measure(label: string, fn: () => Promise<unknown>) {
  for (let i = 0; i < 200; i++) await fn();
  const c0 = process.cpuUsage(); const t0 = Date.now();
  for (let i = 0; i < N; i++) await fn();
  const c = process.cpuUsage(c0); const ms = Date.now() - t0;
  console.log(`${label}: ${(ms / N).toFixed(3)} ms wall, ${((c.user + c.system) / 1000 / N).toFixed(3)} ms CPU (user ${(c.user / 1000 / N).toFixed(3)}) per op`);
}
const ba = h.tenant.businessAccountId, pn = h.tenant.phoneNumberId;
await measure('prisma phoneNumber.findUnique', () => prisma.phoneNumber.findUnique({ where: { businessAccountId_phoneNumberId: { businessAccountId: ba, phoneNumberId: pn } }, select: { status: true, removedAt: true } }));
await measure('pg raw same query', () => pool.query('SELECT status, removed_at FROM phone_numbers WHERE business_account_id = $1 AND phone_number_id = $2 LIMIT 1', [ba, pn]));
await measure('pg raw named', () => pool.query({ name: 'pn1', text: 'SELECT status, removed_at FROM phone_numbers WHERE business_account_id = $1 AND phone_number_id = $2 LIMIT 1', values: [ba, pn] }));
await measure('prisma message.findUnique', () => prisma.message.findUnique({ where: { id: 1 } }));
await measure('prisma $queryRaw', () => prisma.$queryRaw`SELECT 1`);
await prisma.$disconnect(); await pool.end();
