// The ceiling for the webhook ingest bench: a bare node:http server that reads the request body and answers
// 200 with a small JSON body, nothing else. Port from HELLO_PORT; stops on SIGTERM.
import http from 'node:http';

const body = Buffer.from('{"statusCode":200,"message":"Success","data":{"received":true}}');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.HELLO_PORT), '127.0.0.1', () =>
  console.log(`hello server on ${process.env.HELLO_PORT}`),
);
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
