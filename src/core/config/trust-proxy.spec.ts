import { parseTrustProxy } from './trust-proxy.js';

describe('parseTrustProxy', () => {
  it('reads off, hop counts and proxy addresses/CIDRs', () => {
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('0')).toBe(false);
    expect(parseTrustProxy('1')).toBe(1);
    expect(parseTrustProxy('10.0.0.0/8, 192.168.1.7 ,loopback,fd00::/8,::1')).toEqual([
      '10.0.0.0/8',
      '192.168.1.7',
      'loopback',
      'fd00::/8',
      '::1',
    ]);
  });

  it('refuses "trust everything" and anything it does not understand', () => {
    expect(() => parseTrustProxy('true')).toThrow(/must not be true/);
    expect(() => parseTrustProxy('yes')).toThrow(/must not be true/);
    expect(() => parseTrustProxy('11')).toThrow(/at most 10/);
    expect(() => parseTrustProxy('10.0.0.0/33')).toThrow(/10\.0\.0\.0\/33/);
    expect(() => parseTrustProxy('proxy.internal')).toThrow(/proxy\.internal/);
    expect(() => parseTrustProxy('::1/129')).toThrow(/::1\/129/);
  });
});
