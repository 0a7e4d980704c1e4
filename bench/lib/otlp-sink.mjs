// The trace collector's stand-in for BENCH_TRACING=1: an OTLP/HTTP receiver (POST /v1/traces, as a collector listens
// on :4318) that reads each export and answers 200, nothing else, so the bench measures what tracing costs the API and
// the worker (building, batching, serialising and sending spans), not a collector's own work on the same cores. Port
// from OTLP_SINK_PORT; on SIGTERM it prints how many exports and bytes it received, then exits.
import http from 'node:http';

let exports = 0;
let bytes = 0;
const server = http.createServer((req, res) => {
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    if (req.url === '/v1/traces') exports++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.OTLP_SINK_PORT), '127.0.0.1', () =>
  console.log(`otlp sink on ${process.env.OTLP_SINK_PORT}`),
);
process.on('SIGTERM', () => {
  console.log(`otlp sink: ${exports} trace exports, ${(bytes / 1e6).toFixed(1)} MB`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
