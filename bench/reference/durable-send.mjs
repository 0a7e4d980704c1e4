// The physical reference for sends (`npm run bench:send`, issue 40 item 4): what a plain node:http server does per
// durable send on this machine, against the same PostgreSQL, Redis and upstream (the simulator) as the service. Not
// part of the service; nothing imports it.
//
// Per POST /messages (the bench's template body): parse the JSON; check the key pair against the pairs held in
// memory (by access key; SHA-256 of the secret, timingSafeEqual; 401 otherwise), which names the business account; take a pacing slot (one Redis round trip: a Lua
// INCR of the number's current second with its expiry; a full second waits for the next, up to 5 s, then 429); INSERT the message as `pending`
// (RETURNING id: its own implicit transaction, so one commit before the call; every statement named, i.e. prepared
// once per connection, as the service's are); POST the template to the upstream
// (`UPSTREAM_BASE_URL/{phoneNumberId}/messages`, Bearer token, a keep-alive agent); UPDATE the row to `sent` with
// Meta's wamid (one more commit); answer 200 with the id, status and wamid. An upstream error → the row `failed`
// and 502.
//
// Env: PORT, DATABASE_URL, REDIS_URL, UPSTREAM_BASE_URL, KEY_PAIRS (JSON: [{accessKey, secretKey, businessAccountId,
// accessToken}], the bench's tenants: the account a key reaches and its token at Meta), POOL (default 10), PACE_PER_SECOND (default 1000).
// GET /stats: requests, sent, failed, rejected.
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { Redis } from 'ioredis';
import pg from 'pg';

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is required`);
    process.exit(64);
  }
  return v;
};
const PORT = Number(env('PORT'));
const UPSTREAM = env('UPSTREAM_BASE_URL').replace(/\/$/, '');
/** access key → the SHA-256 of its secret, its business account and the account's token at Meta. */
const KEYS = new Map(
  JSON.parse(env('KEY_PAIRS')).map((k) => [
    k.accessKey,
    {
      secretHash: createHash('sha256').update(k.secretKey).digest(),
      account: k.businessAccountId,
      token: k.accessToken,
    },
  ]),
);
const PACE = Number(process.env.PACE_PER_SECOND ?? 1000);

const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: Number(process.env.POOL ?? 10) });
pool.on('error', (err) => console.error(`pool error: ${err.message}`));
const redis = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1 });
redis.defineCommand('slot', {
  numberOfKeys: 1,
  lua: "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], 2000) end return n",
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const stats = { requests: 0, sent: 0, failed: 0, rejected: 0 };

function answer(res, status, body) {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}

/** The business account of the request's key pair ({account, token}), or undefined. */
function accountOf(req) {
  const key = KEYS.get(req.headers['x-access-key']);
  const secret = req.headers['x-secret-key'];
  if (!key || typeof secret !== 'string') return undefined;
  return timingSafeEqual(createHash('sha256').update(secret).digest(), key.secretHash) ? key : undefined;
}

/** POSTs Meta's template payload; resolves Meta's wamid or rejects with its error. */
function callUpstream(token, phoneNumberId, payload) {
  const body = Buffer.from(JSON.stringify(payload));
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${UPSTREAM}/${phoneNumberId}/messages`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': body.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            const wamid = parsed?.messages?.[0]?.id;
            if (res.statusCode === 200 && typeof wamid === 'string') resolve(wamid);
            else reject(new Error(`upstream ${res.statusCode}: ${parsed?.error?.message ?? 'no message id'}`));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function send(account, body, res) {
  const { phoneNumberId, to, templateName, templateLanguage } = body;
  if (typeof phoneNumberId !== 'string' || typeof to !== 'string' || typeof templateName !== 'string')
    return answer(res, 422, { statusCode: 422, message: 'phoneNumberId, to and templateName are required' });
  // A slot in the number's current second; when the second is full, wait for the next (up to 5 s, as the service
  // waits up to PACING_MAX_WAIT_MS), so that Meta never sees more than its tier.
  for (let tries = 0; ; tries++) {
    const now = Date.now();
    const used = await redis.slot(`ref:pace:${phoneNumberId}:${Math.floor(now / 1000)}`);
    if (used <= PACE) break;
    if (tries >= 5) {
      stats.rejected++;
      return answer(res, 429, { statusCode: 429, message: 'over the number throughput' });
    }
    await new Promise((r) => setTimeout(r, 1000 - (now % 1000)));
  }
  const template = { name: templateName, language: { code: templateLanguage ?? 'en_US' } };
  const inserted = await pool.query({
    name: 'ref_insert_pending',
    text: `INSERT INTO messages (business_account_id, phone_number_id, "to", type, template_name, template_language, content,
       status, accepted_at, updated_at)
     VALUES ($1, $2, $3, 'template', $4, $5, $6, 'pending', now(), now()) RETURNING id`,
    values: [
      account.account,
      phoneNumberId,
      to,
      templateName,
      template.language.code,
      JSON.stringify({ components: [] }),
    ],
  });
  const id = inserted.rows[0].id;
  try {
    const wamid = await callUpstream(account.token, phoneNumberId, {
      messaging_product: 'whatsapp',
      to,
      type: 'template',
      template,
    });
    await pool.query({
      name: 'ref_mark_sent',
      text: `UPDATE messages SET status = 'sent', upstream_message_id = $2, sent_at = now(), updated_at = now() WHERE id = $1`,
      values: [id, wamid],
    });
    stats.sent++;
    answer(res, 200, { statusCode: 200, message: 'Success', data: { id, status: 'sent', upstreamMessageId: wamid } });
  } catch (err) {
    await pool.query({
      name: 'ref_mark_failed',
      text: `UPDATE messages SET status = 'failed', failed_at = now(), updated_at = now() WHERE id = $1`,
      values: [id],
    });
    stats.failed++;
    answer(res, 502, { statusCode: 502, message: err instanceof Error ? err.message : String(err) });
  }
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') return answer(res, 200, stats);
  if (req.method !== 'POST' || req.url !== '/messages')
    return answer(res, 404, { statusCode: 404, message: 'Not Found' });
  stats.requests++;
  const account = accountOf(req);
  if (!account) return answer(res, 401, { statusCode: 401, message: 'Unauthorized' });
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return answer(res, 400, { statusCode: 400, message: 'body is not JSON' });
    }
    send(account, body, res).catch((err) => {
      stats.failed++;
      answer(res, 503, { statusCode: 503, message: err instanceof Error ? err.message : String(err) });
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, '127.0.0.1', () => console.log(`durable-send reference on ${PORT}`));
process.on('SIGTERM', () => {
  console.log(`stats ${JSON.stringify(stats)}`);
  server.close();
  void pool.end();
  redis.disconnect();
  process.exit(0);
});
