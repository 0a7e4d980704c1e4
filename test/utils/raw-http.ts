import http from 'node:http';

export interface RawRequest {
  method: string;
  /** Path and query, sent as given (already encoded). */
  path: string;
  /** A header given as an array is sent as that many header lines (duplicate headers). */
  headers?: Record<string, string | string[]>;
  body?: Buffer | string;
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

/**
 * One HTTP request with full control over what goes on the wire (no content-type added, duplicate or
 * oversized headers, bytes that are not UTF-8), unlike supertest which normalises some of it.
 */
export function rawRequest(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        agent: false,
        timeout: req.timeoutMs ?? 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    for (const [name, value] of Object.entries(req.headers ?? {})) r.setHeader(name, value);
    if (req.body !== undefined && !r.hasHeader('content-length'))
      r.setHeader('content-length', Buffer.byteLength(req.body));
    r.on('timeout', () =>
      r.destroy(new Error(`${req.method} ${req.path.slice(0, 100)}: no answer within ${req.timeoutMs ?? 15_000} ms`)),
    );
    r.on('error', reject);
    // The server may answer (413) before reading a large body and close; the answer still arrives.
    r.end(req.body);
  });
}
