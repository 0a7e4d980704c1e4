import type { Request } from 'express';
import { assertSameOrigin } from './same-origin.js';

const request = (method: string, headers: Record<string, string>): Request =>
  ({ method, headers: { host: 'api.example.test', ...headers } }) as unknown as Request;
const verdict = (method: string, headers: Record<string, string>): 'passes' | 'refused' => {
  try {
    assertSameOrigin(request(method, headers), ['https://console.example.test']);
    return 'passes';
  } catch {
    return 'refused';
  }
};

describe('same-origin check of cookie-authenticated unsafe requests (issue 37, finding 10)', () => {
  it('passes an Origin of this service (its host or an allowed origin), refuses any other', () => {
    expect(verdict('POST', { origin: 'https://api.example.test' })).toBe('passes');
    expect(verdict('DELETE', { origin: 'https://console.example.test', 'sec-fetch-site': 'same-site' })).toBe('passes');
    expect(verdict('POST', { origin: 'https://evil.example.test' })).toBe('refused');
    expect(verdict('POST', { origin: 'null' })).toBe('refused');
  });

  it('without an Origin, refuses every Sec-Fetch-Site but same-origin (same-site and none used to pass)', () => {
    expect(verdict('POST', { 'sec-fetch-site': 'same-origin' })).toBe('passes');
    expect(verdict('POST', { 'sec-fetch-site': 'same-site' })).toBe('refused');
    expect(verdict('PATCH', { 'sec-fetch-site': 'none' })).toBe('refused');
    expect(verdict('POST', { 'sec-fetch-site': 'cross-site' })).toBe('refused');
  });

  it('passes a client that sends neither header (curl, a backend: not a browser carrying a victim’s cookie) and every safe method', () => {
    expect(verdict('POST', {})).toBe('passes');
    expect(verdict('GET', { origin: 'https://evil.example.test', 'sec-fetch-site': 'cross-site' })).toBe('passes');
  });
});
