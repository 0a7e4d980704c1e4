import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Response } from 'supertest';
import { startStack, type Stack } from '../utils/stack.js';
import { eventually, onboard, recipient, type Tenant } from '../utils/factories.js';

/** A real 1×1 PNG with random trailing bytes (after IEND, which decoders ignore), so each run's file is its own. */
const png = () =>
  Buffer.concat([
    Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    ),
    randomBytes(64),
  ]);

/** supertest: the body as raw bytes whatever the content type. */
const binary = (res: Response, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

describe('Media: upload, send by id, inbound media, download (simulator + real API + worker)', () => {
  let stack: Stack;
  let t: Tenant;
  let other: Tenant;

  const uploadPath = (tenant: Tenant) =>
    `/business-accounts/${tenant.account.wabaId}/phone-numbers/${tenant.account.phoneNumberId}/media`;
  const upload = (file: Buffer, filename: string, contentType: string, tenant = t) =>
    stack.http
      .post(uploadPath(tenant))
      .set('cookie', tenant.operator.cookie)
      .attach('file', file, { filename, contentType });
  const download = (wabaId: string, mediaId: string, tenant = t) =>
    stack.http
      .get(`/business-accounts/${wabaId}/media/${mediaId}`)
      .set('cookie', tenant.operator.cookie)
      .buffer(true)
      .parse(binary);

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    [t, other] = await Promise.all([onboard(stack, 'Media Org'), onboard(stack, 'Other Media Org')]);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('round trip with real bytes: upload a PNG, send it by id, receive an inbound image, download it byte-identical', async () => {
    const file = png();
    const uploaded = await upload(file, 'parcel.png', 'image/png');
    expect(uploaded.status).toBe(200);
    expect(uploaded.body.data).toEqual({
      id: expect.stringMatching(/^\d+$/),
      mimeType: 'image/png',
      size: file.length,
    });
    const mediaId = uploaded.body.data.id as string;
    expect(stack.sim.mediaBytes(mediaId)?.equals(file)).toBe(true);

    // The customer writes in (an image: that opens the window), then the business answers with the uploaded image.
    const to = recipient();
    const inbound = await fetch(`${stack.sim.url}/_sim/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        from: to,
        type: 'image',
        image: { caption: 'The box is damaged' },
        media: { base64: file.toString('base64'), mimeType: 'image/png' },
      }),
    });
    expect(inbound.status).toBe(200);
    const { mediaId: inboundMediaId } = (await inbound.json()) as { mediaId: string };

    const event = await eventually(async () => {
      const res = await stack.http
        .get('/webhooks/events')
        .set('cookie', t.operator.cookie)
        .query({ wabaId: t.account.wabaId, kind: 'inbound_message' });
      return (res.body.data?.items as Array<{ media?: { id: string } }> | undefined)?.find(
        (e) => e.media?.id === inboundMediaId,
      );
    });
    expect(event).toMatchObject({
      title: expect.stringContaining('The box is damaged'),
      media: {
        id: inboundMediaId,
        mimeType: 'image/png',
        caption: 'The box is damaged',
        filename: null,
        downloadPath: `/business-accounts/${t.account.wabaId}/media/${inboundMediaId}`,
      },
    });

    const sent = await eventually(async () => {
      const res = await stack.http
        .post('/messages')
        .set(t.key.headers)
        .send({
          phoneNumberId: t.account.phoneNumberId,
          to,
          type: 'image',
          image: { id: mediaId, caption: 'Here is the label' },
        });
      return res.status === 200 ? res : undefined;
    });
    expect(sent?.body.data).toMatchObject({ type: 'image', status: 'sent' });
    expect(stack.sim.sends({ to })[0]!.body).toMatchObject({
      type: 'image',
      image: { id: mediaId, caption: 'Here is the label' },
    });

    const bytes = await download(t.account.wabaId, inboundMediaId);
    expect(bytes.status).toBe(200);
    expect(bytes.headers['content-type']).toBe('image/png');
    expect(Number(bytes.headers['content-length'])).toBe(file.length);
    expect(Buffer.isBuffer(bytes.body) && bytes.body.equals(file)).toBe(true);
    // Neither the token nor Meta's URL reach the caller.
    expect(JSON.stringify(bytes.headers)).not.toMatch(/_media|sim-token|Bearer/);
  });

  it('404 for an unknown media id, another organization’s account, and media of another account', async () => {
    const uploaded = await upload(png(), 'p.png', 'image/png');
    const mediaId = uploaded.body.data.id as string;
    expect((await download(t.account.wabaId, mediaId)).status).toBe(200);
    expect((await download(t.account.wabaId, '999999999999999')).status).toBe(404);
    expect((await download(t.account.wabaId, 'not-a-number')).status).toBe(404);
    expect((await download(t.account.wabaId, mediaId, other)).status).toBe(404);
    expect((await download(other.account.wabaId, mediaId, other)).status).toBe(404);
  });

  it('refuses a 20 MB mp4 (413) and an .exe (422), naming file, before any upstream call', async () => {
    const before = stack.sim.uploadAttempts(t.account.phoneNumberId);
    const big = await upload(Buffer.alloc(20 * 1024 * 1024, 1), 'big.mp4', 'video/mp4');
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({
      statusCode: 413,
      errors: [{ field: 'file', message: expect.stringMatching(/video/) }],
    });

    const exe = await upload(Buffer.from('MZ\x90\x00 not a real program'), 'setup.exe', 'application/x-msdownload');
    expect(exe.status).toBe(422);
    expect(exe.body).toMatchObject({
      statusCode: 422,
      message: 'Field Validation Failed',
      errors: [{ field: 'file' }],
    });
    const octet = await upload(Buffer.from('MZ'), 'setup.exe', 'application/octet-stream');
    expect(octet.status).toBe(422);

    const none = await stack.http.post(uploadPath(t)).set('cookie', t.operator.cookie).field('other', 'x');
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual([{ field: 'file', message: expect.any(String) }]);
    expect(stack.sim.uploadAttempts(t.account.phoneNumberId)).toBe(before);
  });

  it('refuses a file whose first bytes are not its declared type (an HTML page as a PNG, a program as a PDF, binary as text): 422 naming file, nothing stored at Meta', async () => {
    const stored = stack.sim.mediaCount(t.account.wabaId);
    const html = await upload(Buffer.from('<!DOCTYPE html><script>steal()</script>'), 'p.png', 'image/png');
    expect(html.status).toBe(422);
    expect(html.body).toMatchObject({
      statusCode: 422,
      errors: [
        {
          field: 'file',
          message: "the file's first bytes do not match its declared type image/png (they look like an HTML page)",
        },
      ],
    });
    const program = await upload(Buffer.from('MZ\x90\x00\x03 not a real program'), 'invoice.pdf', 'application/pdf');
    expect(program.status).toBe(422);
    expect(program.body.errors).toEqual([{ field: 'file', message: expect.stringMatching(/Windows program/) }]);
    const binary = await upload(Buffer.from([0x68, 0x69, 0x00, 0x01, 0x02]), 'notes.txt', 'text/plain');
    expect(binary.status).toBe(422);
    // A file shorter than the bytes checked is judged by what it has: a real one passes.
    const pdf = await upload(Buffer.from('%PDF-1.7\n%%EOF\n'), 'short.pdf', 'application/pdf');
    expect(pdf.status).toBe(200);
    expect(pdf.body.data).toMatchObject({ mimeType: 'application/pdf' });
    await eventually(async () => stack.sim.uploadsOpen() === 0);
    expect(stack.sim.mediaCount(t.account.wabaId)).toBe(stored + 1);
  });

  it('refuses a sticker over 500 KB, and an upload to another organization’s account (404)', async () => {
    const foreign = await stack.http
      .post(uploadPath(t))
      .set('cookie', other.operator.cookie)
      .attach('file', png(), { filename: 'p.png', contentType: 'image/png' });
    expect(foreign.status).toBe(404);
    const big = await upload(Buffer.alloc(600 * 1024, 1), 's.webp', 'image/webp');
    expect(big.status).toBe(413);
    expect(big.body.errors).toEqual([{ field: 'file', message: expect.stringMatching(/sticker/) }]);
  });

  it('stops an upload without a declared length once it passes the limit (413), aborting the upstream upload', async () => {
    const boundary = 'xTestBoundary';
    const url = new URL(stack.url + uploadPath(t));
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: url.pathname,
          headers: {
            cookie: t.operator.cookie,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'transfer-encoding': 'chunked',
          },
        },
        (r) => {
          let body = '';
          r.on('data', (c: Buffer) => (body += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
      );
      req.write(png());
      for (let i = 0; i < 6; i++) req.write(Buffer.alloc(1024 * 1024, 7));
      req.end(`\r\n--${boundary}--\r\n`);
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({
      statusCode: 413,
      errors: [{ field: 'file', message: expect.stringMatching(/image/) }],
    });
  });

  it('inbound document, audio, interactive reply, location and reaction arrive as events (media ones with their download path)', async () => {
    const from = recipient();
    const post = (body: object) =>
      fetch(`${stack.sim.url}/_sim/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ wabaId: t.account.wabaId, phoneNumberId: t.account.phoneNumberId, from, ...body }),
      }).then(async (r) => {
        expect(r.status).toBe(200);
        return (await r.json()) as { wamid: string; mediaId?: string };
      });
    const pdf = Buffer.from('%PDF-1.4 invoice');
    const doc = await post({
      type: 'document',
      document: { filename: 'invoice.pdf', caption: 'Invoice' },
      media: { base64: pdf.toString('base64'), mimeType: 'application/pdf' },
    });
    const voice = await post({
      type: 'audio',
      audio: { voice: true },
      media: { base64: Buffer.from('OggS').toString('base64'), mimeType: 'audio/ogg' },
    });
    const reply = await post({
      type: 'interactive',
      interactive: { type: 'button_reply', button_reply: { id: 'am', title: 'Morning' } },
      context: { from: '447700900500', id: 'wamid.x' },
    });
    const place = await post({ type: 'location', location: { latitude: 51.5, longitude: -0.12, name: 'Home' } });
    const reaction = await post({ type: 'reaction', reaction: { message_id: reply.wamid, emoji: '❤️' } });

    const events = await eventually(async () => {
      const res = await stack.http
        .get('/webhooks/events')
        .set('cookie', t.operator.cookie)
        .query({ wabaId: t.account.wabaId, kind: 'inbound_message', limit: 100 });
      const mine = (res.body.data?.items ?? []) as Array<{
        messageId: string;
        title: string;
        media: unknown;
        raw: Record<string, unknown>;
      }>;
      const byId = new Map(mine.map((e) => [e.messageId, e]));
      return [doc, voice, reply, place, reaction].every((m) => byId.has(m.wamid)) ? byId : undefined;
    });
    expect(events!.get(doc.wamid)).toMatchObject({
      title: expect.stringContaining('invoice.pdf'),
      media: { id: doc.mediaId, mimeType: 'application/pdf', filename: 'invoice.pdf', caption: 'Invoice' },
    });
    expect(events!.get(voice.wamid)).toMatchObject({ media: { id: voice.mediaId, mimeType: 'audio/ogg' } });
    expect(events!.get(reply.wamid)).toMatchObject({
      title: expect.stringContaining('Morning'),
      media: null,
      raw: { type: 'interactive', interactive: { button_reply: { id: 'am' } } },
    });
    expect(events!.get(place.wamid)).toMatchObject({
      title: expect.stringContaining('Home'),
      raw: { location: { latitude: 51.5 } },
    });
    expect(events!.get(reaction.wamid)).toMatchObject({
      title: expect.stringContaining('❤️'),
      raw: { reaction: { message_id: reply.wamid } },
    });

    const bytes = await download(t.account.wabaId, doc.mediaId!);
    expect(bytes.headers['content-type']).toBe('application/pdf');
    expect((bytes.body as Buffer).equals(pdf)).toBe(true);
  });
});
