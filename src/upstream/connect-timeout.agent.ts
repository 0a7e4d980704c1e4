import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';

/** `code` of the error a socket is destroyed with when it does not connect in time. */
export const CONNECT_TIMEOUT_CODE = 'UPSTREAM_CONNECT_TIMEOUT';

/**
 * Node has no connect timeout: a SYN to a black-holed host waits for the OS (minutes). Axios's `timeout`
 * covers the whole exchange, so a short connect timeout lets a dead route fail fast while slow answers
 * still get the full read timeout. Reused keep-alive sockets are already connected and unaffected.
 */
function armConnectTimeout(socket: Duplex | null | undefined, ms: number): void {
  if (!(socket instanceof net.Socket) || !socket.connecting) return;
  const timer = setTimeout(() => {
    socket.destroy(Object.assign(new Error(`connect timeout after ${ms} ms`), { code: CONNECT_TIMEOUT_CODE }));
  }, ms);
  socket.once('connect', () => clearTimeout(timer));
  socket.once('close', () => clearTimeout(timer));
}

export class ConnectTimeoutHttpAgent extends http.Agent {
  constructor(
    options: http.AgentOptions,
    private readonly connectTimeoutMs: number,
  ) {
    super(options);
  }

  override createConnection(
    ...args: Parameters<http.Agent['createConnection']>
  ): ReturnType<http.Agent['createConnection']> {
    const socket = super.createConnection(...args);
    armConnectTimeout(socket, this.connectTimeoutMs);
    return socket;
  }
}

export class ConnectTimeoutHttpsAgent extends https.Agent {
  constructor(
    options: https.AgentOptions,
    private readonly connectTimeoutMs: number,
  ) {
    super(options);
  }

  override createConnection(
    ...args: Parameters<https.Agent['createConnection']>
  ): ReturnType<https.Agent['createConnection']> {
    const socket = super.createConnection(...args);
    armConnectTimeout(socket, this.connectTimeoutMs);
    return socket;
  }
}
