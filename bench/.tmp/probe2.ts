import fs from 'node:fs';
import { execSync } from 'node:child_process';
import { CpuMeter } from '../lib/cpu.js';
import { load } from '../lib/report.js';
const h = JSON.parse(fs.readFileSync('/tmp/bench-scratch/hold.json', 'utf8'));
const labels = () => {
  const m = new Map<number, string>([[process.pid, 'loadgen']]);
  for (const line of execSync('ps -eo pid,args').toString().split('\n')) {
    const [pid, ...rest] = line.trim().split(/\s+/); const a = rest.join(' ');
    if (a.includes('build/src/main.js')) m.set(Number(pid), 'api');
    else if (a.includes('hold-services')) m.set(Number(pid), 'services');
    else if (a.includes('build/simulator/main.js')) m.set(Number(pid), 'simulator');
  }
  return m;
};
const rate = Number(process.env.RATE ?? 200);
for (const [label, opts] of [
  ['GET /nope (404)', { path: '/nope' }],
  ['POST /messages no key (401)', { path: '/messages', method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }],
  ['POST /messages bad body (422)', { path: '/messages', method: 'POST', body: '{"to":"x"}', headers: { 'content-type': 'application/json', 'x-access-key': h.tenant.accessKey, 'x-secret-key': h.tenant.secretKey } }],
  ['sim send direct', { url: h.simUrl + '/v23.0/' + h.tenant.phoneNumberId + '/messages', method: 'POST', body: JSON.stringify({ messaging_product: 'whatsapp', to: '447700900123', type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } }), headers: { 'content-type': 'application/json', authorization: 'Bearer x' } }],
] as const) {
  const m = new CpuMeter(labels); m.begin();
  const o = opts as { url?: string; path: string; method?: string; body?: string; headers?: Record<string, string> };
  const r = await load(label, { url: (o.url ?? h.apiUrls[0] + o.path), method: o.method ?? 'GET', body: o.body, headers: o.headers, connections: 10, duration: 5, overallRate: rate });
  const u = m.end()!;
  const per = (r.responses / r.durationS);
  console.log('   ' + Object.entries(u.cores).filter(([k]) => k !== 'other').map(([k, v]) => `${k} ${(v / per * 1000).toFixed(2)} ms`).join(', ') + `; other ${u.cores.other ?? 0} cores`);
}
