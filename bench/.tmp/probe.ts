// scratch: fixed-rate send load against the held stack, CPU per request per process group
import fs from 'node:fs';
import { execSync } from 'node:child_process';
import { CpuMeter, formatCpu } from '../lib/cpu.js';
import { load } from '../lib/report.js';
const h = JSON.parse(fs.readFileSync('/tmp/bench-scratch/hold.json', 'utf8'));
const rate = Number(process.env.RATE ?? 100), dur = Number(process.env.DUR ?? 10), conns = Number(process.env.CONNS ?? 20);
const labels = () => {
  const m = new Map<number, string>([[process.pid, 'loadgen']]);
  for (const line of execSync('ps -eo pid,args').toString().split('\n')) {
    const [pid, ...rest] = line.trim().split(/\s+/); const a = rest.join(' ');
    if (a.includes('build/src/main.js')) m.set(Number(pid), 'api');
    else if (a.includes('build/src/worker.js')) m.set(Number(pid), 'worker');
    else if (a.includes('build/simulator/main.js')) m.set(Number(pid), 'simulator');
    else if (a.includes('local-services.mjs') && a.includes('hold-services')) m.set(Number(pid), 'services');
  }
  return m;
};
let n = 0;
const mode = process.env.MODE ?? 'send';
const meter = new CpuMeter(labels);
meter.begin();
const r = mode === 'send' ? await load('send', { url: h.apiUrls[0], connections: conns, duration: dur, ...(rate ? { overallRate: rate } : {}),
  headers: { 'content-type': 'application/json', 'x-access-key': h.tenant.accessKey, 'x-secret-key': h.tenant.secretKey },
  requests: [{ method: 'POST', path: '/messages', setupRequest: (req) => ({ ...req, body: JSON.stringify({ phoneNumberId: h.tenant.phoneNumberId, to: `4477001${String(n++ % 100000).padStart(5, '0')}`, type: 'template', templateName: 'hello_world', templateLanguage: 'en_US' }) }) }] })
  : await load('events', { url: `${h.apiUrls[0]}/webhooks/events?wabaId=${h.tenant.wabaId}&page=1&limit=50`, connections: conns, duration: dur, headers: { cookie: h.tenant.cookie } });
const u = meter.end();
console.log(formatCpu(u));
if (u) for (const [k, v] of Object.entries(u.cores)) console.log(`  ${k}: ${(v / (r.ok2xx / r.durationS) * 1000).toFixed(2)} ms CPU per request`);
