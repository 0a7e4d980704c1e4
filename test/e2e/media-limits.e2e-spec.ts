import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStack, type Stack } from '../utils/stack.js';
import { eventually, helloWorld, onboard, recipient, type Tenant } from '../utils/factories.js';

const PNG_HEAD = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const BOUNDARY = 'xMediaLimits';
const partHead = (name: string, filename: string, type: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;

/** An upload written by hand (chunked, no declared length), so a test decides how much is sent and when the client leaves. */
function openUpload(stack: Stack, t: Tenant) {
  const url = new URL(
    `${stack.url}/business-accounts/${t.account.wabaId}/phone-numbers/${t.account.phoneNumberId}/media`,
  );
  const req = http.request({
    host: '127.0.0.1',
    port: url.port,
    method: 'POST',
    path: url.pathname,
    agent: false,
    headers: {
      cookie: t.operator.cookie,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'transfer-encoding': 'chunked',
    },
  });
  let written = 0;
  const answer = new Promise<
    { status: number; body: string; headers: http.IncomingHttpHeaders; writtenBefore: number } | undefined
  >((resolve) => {
    let responding = false;
    // The server may answer before the body is all sent, then close: the write fails (EPIPE) but the answer came.
    const gone = () => setTimeout(() => responding || resolve(undefined), 200);
    req.on('response', (res) => {
      responding = true;
      const writtenBefore = written;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, writtenBefore }));
      res.on('error', () => resolve(undefined));
      res.on('close', () => resolve(undefined));
    });
    req.on('error', gone);
    req.on('close', gone);
  });
  const write = (chunk: Buffer | string) =>
    new Promise<boolean>((resolve) => {
      if (req.destroyed) return resolve(false);
      written += Buffer.byteLength(chunk);
      if (req.write(chunk)) return resolve(true);
      const drained = () => resolve(true);
      req.once('drain', drained);
      req.once('close', () => resolve(false));
    });
  return { req, answer, write, written: () => written };
}

describe('Media transfers are bounded (issue 29, finding 1)', () => {
  let stack: Stack;
  let t: Tenant;
  let other: Tenant;
  /** Whose session's console rate limit the 300 drops did not spend. */
  let fresh: Tenant;

  beforeAll(async () => {
    stack = await startStack({ env: { MEDIA_IDLE_TIMEOUT_MS: '3000' } });
    [t, other, fresh] = await Promise.all([
      onboard(stack, 'Dropping Org'),
      onboard(stack, 'Sending Org'),
      onboard(stack, 'Fresh Org'),
    ]);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('300 uploads opened and dropped by one tenant hold no upstream socket, and another tenant’s send answers 200 at once', async () => {
    const uploads = Array.from({ length: 300 }, () => openUpload(stack, t));
    await Promise.all(
      uploads.map((u) =>
        u
          .write(partHead('file', 'a.png', 'image/png'))
          .then(() => u.write(Buffer.concat([PNG_HEAD, Buffer.alloc(32 * 1024, 1)]))),
      ),
    );
    // Every upload is either refused (its answer came) or admitted and streaming to the upstream; then every
    // client goes away mid-file.
    let answered = 0;
    for (const u of uploads) void u.answer.then((a) => a && answered++);
    await eventually(async () => answered + stack.sim.uploadsOpen() === uploads.length, {
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    expect(stack.sim.uploadsOpen()).toBeGreaterThan(0);
    for (const u of uploads) u.req.destroy();

    await eventually(async () => stack.sim.uploadsOpen() === 0, { timeoutMs: 15_000, intervalMs: 20 });
    expect(stack.sim.uploadsOpen()).toBe(0);

    // Before the fix the 300 uploads held the shared upstream pool until its 120 s socket timeout, and this send
    // waited for a socket that long, or failed. A quiet host answers it in milliseconds; a slow, busy one still
    // cleaning up 300 connections in seconds: the bound is the one that tells the two apart.
    const started = Date.now();
    const sent = await stack.http.post('/messages').set(other.key.headers).send(helloWorld(other, recipient()));
    expect(sent.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 180_000);

  it('caps media transfers per organization: the one past its share gets 429 + Retry-After, another organization still uploads', async () => {
    const held = Array.from({ length: 4 }, () => openUpload(stack, fresh));
    await Promise.all(held.map((u) => u.write(partHead('file', 'a.png', 'image/png')).then(() => u.write(PNG_HEAD))));
    await eventually(async () => stack.sim.uploadsOpen() === 4, { timeoutMs: 15_000, intervalMs: 20 });

    const refused = await stack.http
      .post(`/business-accounts/${fresh.account.wabaId}/phone-numbers/${fresh.account.phoneNumberId}/media`)
      .set('cookie', fresh.operator.cookie)
      .attach('file', PNG_HEAD, { filename: 'p.png', contentType: 'image/png' });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({
      statusCode: 429,
      message: expect.stringMatching(/media transfers open for this organization \(at most 4/),
    });

    const fine = await stack.http
      .post(`/business-accounts/${other.account.wabaId}/phone-numbers/${other.account.phoneNumberId}/media`)
      .set('cookie', other.operator.cookie)
      .attach('file', PNG_HEAD, { filename: 'p.png', contentType: 'image/png' });
    expect(fine.status).toBe(200);

    // Once they finish, the organization has its share back.
    for (const u of held) await u.write(`\r\n--${BOUNDARY}--\r\n`);
    for (const u of held) u.req.end();
    expect((await Promise.all(held.map((u) => u.answer))).map((a) => a?.status)).toEqual([200, 200, 200, 200]);
    const again = await stack.http
      .post(`/business-accounts/${fresh.account.wabaId}/phone-numbers/${fresh.account.phoneNumberId}/media`)
      .set('cookie', fresh.operator.cookie)
      .attach('file', PNG_HEAD, { filename: 'p.png', contentType: 'image/png' });
    expect(again.status).toBe(200);
  }, 180_000);

  it('a large second part is not read to the end: 413 once the body passes what its file may take, and the upstream upload is aborted', async () => {
    const u = openUpload(stack, fresh);
    await u.write(partHead('file', 'a.png', 'image/png'));
    await u.write(PNG_HEAD);
    await u.write(`\r\n${partHead('extra', 'big.bin', 'application/octet-stream')}`);
    let answered = false;
    void u.answer.then(() => (answered = true));
    const chunk = Buffer.alloc(1024 * 1024, 7);
    // At most 64 MB, stopping as a client would once the answer came.
    while (!answered && u.written() < 64 * 1024 * 1024) if (!(await u.write(chunk))) break;
    const answer = await u.answer;
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer!.body)).toMatchObject({
      statusCode: 413,
      errors: [
        {
          field: 'file',
          message: expect.stringMatching(
            /image \(image\/png\) may be at most 5242880 bytes; the whole request body at most 5259264 bytes/,
          ),
        },
      ],
    });
    // 5 MB (an image) and the multipart around it; what the sockets buffered besides.
    expect(answer!.writtenBefore).toBeLessThan(16 * 1024 * 1024);
    u.req.destroy();
    await eventually(async () => stack.sim.uploadsOpen() === 0, { timeoutMs: 15_000, intervalMs: 20 });
    expect(stack.sim.uploadsOpen()).toBe(0);
  }, 180_000);

  it('an upload whose client stops sending is ended with 408 after MEDIA_IDLE_TIMEOUT_MS, its upstream upload aborted', async () => {
    const u = openUpload(stack, fresh);
    await u.write(partHead('file', 'a.png', 'image/png'));
    await u.write(PNG_HEAD);
    await eventually(async () => stack.sim.uploadsOpen() === 1, { timeoutMs: 15_000, intervalMs: 20 });
    const started = Date.now();
    const answer = await Promise.race([u.answer, sleep(20_000).then(() => undefined)]);
    expect(answer?.status).toBe(408);
    expect(JSON.parse(answer!.body)).toEqual({
      statusCode: 408,
      message: expect.stringMatching(/No bytes of the body received for 3000 ms/),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    await eventually(async () => stack.sim.uploadsOpen() === 0, { timeoutMs: 15_000, intervalMs: 20 });
    expect(stack.sim.uploadsOpen()).toBe(0);
    u.req.destroy();
  }, 180_000);
});
