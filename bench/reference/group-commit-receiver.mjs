// The physical reference for webhook ingest (`npm run bench`, target "reference"): what a plain node:http
// receiver with group commit achieves on this machine, against the same PostgreSQL and the same table as the
// service's receiver (`webhook_inbox`, where a delivery waits to be processed). Not part of the service; nothing
// imports it.
//
// Per request: read the raw bytes, check X-Hub-Signature-256 (HMAC-SHA256 of the exact bytes with the app
// secret, timingSafeEqual; 401 otherwise), parse the JSON (400 when it is not a whatsapp_business_account
// payload with an entry array), take entry[].id as waba_ids. The request then joins the current window: the
// first request of a window starts a WINDOW_MS timer; when it fires (or MAX_ROWS requests are waiting) the
// window is stored with ONE multi-row INSERT (its own implicit transaction, so one commit), and every request
// of the window is answered 200 only after that commit; 503 for every request of a failed INSERT. Windows
// are flushed on up to POOL connections at once (the next window fills while a commit is under way).
// WINDOW_MS=0: no window, one INSERT (one commit) per request.
//
// Env: PORT, DATABASE_URL, APP_SECRET, WINDOW_MS (default 2), MAX_ROWS (default 500), POOL (default 4).
// GET /stats: the counters (requests, acked, rejected, failed, batches, rows, maxRows), also printed on SIGTERM.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const PORT = Number(process.env.PORT);
const SECRET = process.env.APP_SECRET ?? '';
const WINDOW_MS = Number(process.env.WINDOW_MS ?? 2);
const MAX_ROWS = Math.max(1, Number(process.env.MAX_ROWS ?? 500));
const POOL = Math.max(1, Number(process.env.POOL ?? 4));
const BODY_LIMIT = 3 * 1024 * 1024;
if (!PORT || !process.env.DATABASE_URL || !SECRET) {
  console.error('PORT, DATABASE_URL and APP_SECRET are required');
  process.exit(64);
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: POOL });
pool.on('error', (err) => console.error(`pool error: ${err.message}`));

const OK = Buffer.from('{"statusCode":200,"message":"Success","data":{"received":true}}');
const stats = { requests: 0, acked: 0, rejected: 0, failed: 0, batches: 0, rows: 0, maxRows: 0 };

function answer(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}
const error = (res, status, message) =>
  answer(res, status, Buffer.from(JSON.stringify({ statusCode: status, message })));

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
function validSignature(body, header) {
  if (typeof header !== 'string') return false;
  const m = SIGNATURE.exec(header.trim());
  if (!m) return false;
  const given = Buffer.from(m[1], 'hex');
  const expected = createHmac('sha256', SECRET).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** entry[].id (distinct), or null when the payload is not one Meta sends. */
function wabaIdsOf(body) {
  let p;
  try {
    p = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof p !== 'object' || p === null || p.object !== 'whatsapp_business_account' || !Array.isArray(p.entry))
    return null;
  const ids = new Set();
  for (const e of p.entry) if (e && typeof e.id === 'string' && e.id !== '') ids.add(e.id);
  return [...ids];
}

// ---------------------------------------------------------------------------------------------------------
// group commit

/** @type {{ body: Buffer, signature: string, wabaIds: string[], res: http.ServerResponse }[]} */
let window = [];
let timer = null;

function enqueue(item) {
  window.push(item);
  if (WINDOW_MS <= 0 || window.length >= MAX_ROWS) return flush();
  timer ??= setTimeout(flush, WINDOW_MS);
}

function flush() {
  if (timer) clearTimeout(timer);
  timer = null;
  const batch = window;
  window = [];
  if (batch.length === 0) return;
  const params = [];
  const rows = [];
  for (const it of batch) {
    const n = params.length;
    rows.push(`($${n + 1}, $${n + 2}, $${n + 3}::text[])`);
    params.push(it.body, it.signature, it.wabaIds);
  }
  // One statement, one implicit transaction: its commit makes every row of the window durable at once.
  pool.query(`INSERT INTO webhook_inbox (raw_body, signature, waba_ids) VALUES ${rows.join(', ')}`, params).then(
    () => {
      stats.batches++;
      stats.rows += batch.length;
      stats.maxRows = Math.max(stats.maxRows, batch.length);
      stats.acked += batch.length;
      for (const it of batch) answer(it.res, 200, OK);
    },
    (err) => {
      console.error(`batch of ${batch.length} not stored: ${err.message}`);
      stats.failed += batch.length;
      for (const it of batch) error(it.res, 503, 'Service Unavailable: the delivery could not be stored, retry later');
    },
  );
}

// ---------------------------------------------------------------------------------------------------------

const server = http.createServer((req, res) => {
  // The bench reads the counters before and after each measurement (rows per INSERT).
  if (req.method === 'GET' && req.url === '/stats') return answer(res, 200, Buffer.from(JSON.stringify(stats)));
  if (req.method !== 'POST' || !req.url?.startsWith('/webhooks/whatsapp')) return error(res, 404, 'Not Found');
  stats.requests++;
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size <= BODY_LIMIT) chunks.push(c);
  });
  req.on('end', () => {
    if (size > BODY_LIMIT) return error(res, 413, 'Payload Too Large');
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const signature = req.headers['x-hub-signature-256'];
    if (!validSignature(body, signature)) {
      stats.rejected++;
      return error(res, 401, 'Invalid or missing X-Hub-Signature-256');
    }
    const wabaIds = wabaIdsOf(body);
    if (!wabaIds) {
      stats.rejected++;
      return error(res, 400, 'Not a whatsapp_business_account payload');
    }
    enqueue({ body, signature, wabaIds, res });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, '127.0.0.1', () =>
  console.log(`group-commit receiver on ${PORT} (window ${WINDOW_MS} ms, max ${MAX_ROWS} rows, pool ${POOL})`),
);

process.on('SIGTERM', () => {
  console.log(JSON.stringify(stats));
  server.close(() => void pool.end().finally(() => process.exit(0)));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 3000).unref();
});
