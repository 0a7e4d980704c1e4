import type { IncomingMessage, ServerResponse } from 'node:http';
import { metaJson } from './meta-json.js';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Thrown for a request the simulator cannot read (oversized or invalid JSON); mapped to a 400. */
export class BadRequest extends Error {}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadRequest(`body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BadRequest('body is not valid JSON');
  }
}

/** Answers on a Meta path, serialised the way the Graph API does (escaped unicode and slashes). */
export function sendMeta(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, metaJson(body));
}

/** Answers on a `/_sim/` control path: plain JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, JSON.stringify(body));
}

function send(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
