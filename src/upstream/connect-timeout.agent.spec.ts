import http from 'node:http';
import { CONNECT_TIMEOUT_CODE, ConnectTimeoutHttpAgent } from './connect-timeout.agent.js';

describe('ConnectTimeoutHttpAgent', () => {
  it('destroys a socket that has not connected within the connect timeout', async () => {
    const agent = new ConnectTimeoutHttpAgent({ keepAlive: true }, 50);
    const started = Date.now();
    // A DNS lookup that never answers keeps the socket in its connecting state, like a black-holed SYN.
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => {
      http.get({ host: 'upstream.invalid', port: 80, agent, lookup: () => undefined }).on('error', resolve);
    });
    expect(error.code).toBe(CONNECT_TIMEOUT_CODE);
    expect(Date.now() - started).toBeLessThan(1000);
    agent.destroy();
  });
});
