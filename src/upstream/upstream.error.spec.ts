import { inspect } from 'node:util';
import { UpstreamError, parseRetryAfter } from './upstream.error.js';
import { CONNECT_TIMEOUT_CODE } from './connect-timeout.agent.js';

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('UpstreamError.fromResponse', () => {
  const metaBody = {
    error: {
      message: '(#131047) Re-engagement message',
      type: 'OAuthException',
      code: 131047,
      error_data: { messaging_product: 'whatsapp', details: 'More than 24 hours since the customer last replied.' },
      fbtrace_id: 'AXy12AbCdEf',
    },
  };

  it("takes Meta's code, title without the (#code) prefix, details and trace id", () => {
    const err = UpstreamError.fromResponse('sendMessage', 400, metaBody, '12', []);
    expect(err).toMatchObject({
      operation: 'sendMessage',
      httpStatus: 400,
      code: 131047,
      title: 'Re-engagement message',
      detail: 'More than 24 hours since the customer last replied.',
      fbtraceId: 'AXy12AbCdEf',
      errorClass: 'permanent',
      retryAfterSeconds: 12,
      isTimeout: false,
      isNetwork: false,
    });
    expect(err.message).toBe('WhatsApp sendMessage failed: Re-engagement message (code 131047, HTTP 400)');
  });

  it('copes with a body that is not Meta JSON', () => {
    const err = UpstreamError.fromResponse('listTemplates', 502, '<html>Bad gateway</html>', undefined, []);
    expect(err).toMatchObject({ title: 'Upstream answered HTTP 502', errorClass: 'retryable', code: undefined });
  });

  it('redacts the token if the upstream echoes it', () => {
    const token = 'EAAG-secret-token-123';
    const body = { error: { message: `Bad token ${token}`, code: 190, error_data: { details: `got ${token}` } } };
    const err = UpstreamError.fromResponse('getBusinessAccount', 401, body, undefined, [token]);
    for (const text of [err.message, JSON.stringify(err), inspect(err)]) expect(text).not.toContain(token);
    expect(err.title).toBe('Bad token [redacted]');
  });
});

describe('UpstreamError.fromTransport', () => {
  it('marks timeouts and network failures retryable', () => {
    expect(UpstreamError.fromTransport('sendMessage', { code: 'ETIMEDOUT' }, 500)).toMatchObject({
      errorClass: 'retryable',
      isTimeout: true,
      isNetwork: false,
    });
    expect(UpstreamError.fromTransport('sendMessage', { code: 'ECONNREFUSED' }, 500)).toMatchObject({
      errorClass: 'retryable',
      isTimeout: false,
      isNetwork: true,
      title: 'Network error (ECONNREFUSED)',
    });
  });

  it('tells a request that never left (no connection) from one whose outcome is unknown (reset or timed out once connected)', () => {
    const neverSent = (code: string) => UpstreamError.fromTransport('sendMessage', { code }, 500).neverSent;
    expect(
      ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', CONNECT_TIMEOUT_CODE].filter(neverSent),
    ).toHaveLength(6);
    expect(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'ERR_SOCKET_CLOSED'].filter(neverSent)).toEqual([]);
    expect(UpstreamError.fromTransport('sendMessage', {}, 500).neverSent).toBe(false);
  });
});
