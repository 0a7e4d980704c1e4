import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { digestsEqual, sha256Hex } from '../crypto/tokens.js';
import type { Metrics } from './metrics.js';

/**
 * GET /metrics: open when no METRICS_TOKEN is configured, otherwise only with `Authorization: Bearer <token>`
 * (compared in constant time). Shared by the API route and the worker's metrics port.
 */
export async function metricsAnswer(
  metrics: Metrics,
  token: string,
  authorization: string | undefined,
): Promise<{ status: number; contentType: string; body: string }> {
  if (token && !digestsEqual(sha256Hex(authorization ?? ''), sha256Hex(`Bearer ${token}`))) {
    return {
      status: 401,
      contentType: 'text/plain; charset=utf-8',
      body: 'metrics need Authorization: Bearer <METRICS_TOKEN>\n',
    };
  }
  const { contentType, body } = await metrics.exposition();
  return { status: 200, contentType, body };
}

/**
 * The worker's own small HTTP port (it has no API): GET /metrics and GET /health (200 while the process runs).
 * Port 0 takes any free port. Resolves with the server once it listens.
 */
export function startMetricsServer(
  metrics: Metrics,
  opts: { port: number; host?: string; token: string },
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'ok', uptimeSeconds: Math.round(process.uptime()) }));
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      metricsAnswer(metrics, opts.token, req.headers.authorization).then(
        (a) => res.writeHead(a.status, { 'content-type': a.contentType }).end(a.body),
        () => res.writeHead(500).end(),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // Never what keeps the process alive: it lives as long as the worker does.
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve(server.unref()));
  });
}

export const portOf = (server: http.Server) => (server.address() as AddressInfo).port;
