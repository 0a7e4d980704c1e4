// scratch: post N single-status deliveries to the held stack (messages seeded), then exit
import fs from 'node:fs';
import pg from 'pg';
import { load } from '../lib/report.js';
import { StatusPlan, deliveryRequests } from '../lib/webhooks.js';
const h = JSON.parse(fs.readFileSync('/tmp/bench-scratch/hold.json', 'utf8'));
const N = Number(process.env.N ?? 5000), per = Number(process.env.PER ?? 1);
const db = new pg.Pool({ connectionString: h.db });
const plan = new StatusPlan('p' + Date.now().toString(36), N * per);
await plan.seedMessages(db, h.tenant.businessAccountId, h.tenant.phoneNumberId);
const d = plan.deliveries(h.tenant.wabaId, h.tenant.phoneNumberId, per, h.secret);
await load('post', { url: h.apiUrls[0], connections: 32, amount: d.length, requests: deliveryRequests(d).requests });
await db.end();
