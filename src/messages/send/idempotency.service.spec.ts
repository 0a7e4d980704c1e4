import { canonicalJson, IdempotencyService } from './idempotency.service.js';

describe('idempotency fingerprints', () => {
  it('ignores key order but not values', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: 'x' } })).toBe(canonicalJson({ a: { c: 'x', d: [1, 2] }, b: 1 }));
    expect(IdempotencyService.fingerprint({ to: '447700900123' })).not.toBe(
      IdempotencyService.fingerprint({ to: '447700900124' }),
    );
  });

  it('accepts 1-255 visible characters and names the header otherwise', () => {
    expect(IdempotencyService.validateKey('order-7781')).toBe('order-7781');
    expect(IdempotencyService.validateKey(undefined)).toBeUndefined();
    expect(() => IdempotencyService.validateKey('x'.repeat(256))).toThrow('Field Validation Failed');
    expect(() => IdempotencyService.validateKey('has space')).toThrow('Field Validation Failed');
  });
});
