import pg from 'pg';
import fs from 'node:fs';
const h = JSON.parse(fs.readFileSync('/tmp/bench-scratch/hold.json', 'utf8'));
const c = new pg.Client({ connectionString: h.db }); await c.connect();
for (const q of process.argv.slice(2)) { const r = await c.query(q); console.log(JSON.stringify(r.rows ?? r.command)); }
await c.end();
