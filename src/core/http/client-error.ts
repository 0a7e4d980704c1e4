import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { envelope } from './envelope.js';

/**
 * Requests Node's HTTP parser refuses before Express sees them (a header block over the size limit, a
 * malformed request line) are answered in the envelope too, instead of Node's bare status line.
 */
export function answerClientErrorsInEnvelope(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Nothing to answer on a dead socket, or in the middle of a response already on its way.
    const responding =
      (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (err.code === 'ECONNRESET' || !socket.writable || responding) {
      socket.destroy();
      return;
    }
    const [status, message] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout']
          : [400, 'Bad Request'];
    const body = JSON.stringify(envelope(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${message}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
