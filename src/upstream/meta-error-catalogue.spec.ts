import {
  classifyUpstreamError,
  defaultRetryAfterSeconds,
  errorCategoryOf,
  isMarketingStop,
  isRateLimit,
  isThroughputRefusal,
  isTransientPlatformError,
  metaErrorOf,
} from './meta-error-catalogue.js';

describe('the Meta error catalogue', () => {
  it.each([
    [[4, 80007, 130429, 131056, 1, 2, 131000, 131016, 131057, 133004], 'retryable'],
    [[0, 190, 3, 10, 200, 250, 299], 'credential'],
    [[368, 131031, 130497, 131042], 'account_blocked'],
    [
      [131026, 131047, 131049, 131050, 131051, 132000, 132001, 132012, 132015, 132016, 100, 131008, 131009, 133010],
      'permanent',
    ],
  ] as const)('classifies %j as %s', (codes, expected) => {
    for (const code of codes) expect([code, classifyUpstreamError(code, 400)]).toEqual([code, expected]);
  });

  it('answers the three questions callers ask of a code (no Meta code is compared outside the catalogue)', () => {
    const codes = [1, 2, 4, 80007, 130429, 131000, 131016, 131026, 131047, 131050, 131056, 131057, 133004, 190, 0];
    const answers = Object.fromEntries(
      codes.map((c) => [c, [isTransientPlatformError(c), isThroughputRefusal(c), isMarketingStop(c)]]),
    );
    expect(answers).toEqual({
      1: [true, false, false],
      2: [true, false, false],
      4: [false, false, false],
      80007: [false, false, false],
      130429: [false, true, false],
      131000: [true, false, false],
      131016: [true, false, false],
      131026: [false, false, false],
      131047: [false, false, false],
      131050: [false, false, true],
      131056: [false, false, false],
      131057: [true, false, false],
      133004: [true, false, false],
      190: [false, false, false],
      0: [false, false, false],
    });
    for (const absent of [null, undefined, 999999]) {
      expect([isTransientPlatformError(absent), isThroughputRefusal(absent), isMarketingStop(absent)]).toEqual([
        false,
        false,
        false,
      ]);
    }
  });

  it('falls back on the HTTP status for codes that do not decide the class', () => {
    expect(classifyUpstreamError(undefined, 502)).toBe('retryable');
    expect(classifyUpstreamError(undefined, 429)).toBe('retryable');
    expect(classifyUpstreamError(undefined, 401)).toBe('credential');
    expect(classifyUpstreamError(undefined, 404)).toBe('permanent');
    expect(classifyUpstreamError(131026, 500)).toBe('retryable');
    expect(classifyUpstreamError(131047, 500)).toBe('retryable');
  });

  it('keeps the code class over the HTTP status', () => {
    expect(classifyUpstreamError(190, 500)).toBe('credential');
    expect(classifyUpstreamError(368, 503)).toBe('account_blocked');
  });

  it.each([
    [131047, undefined, 'window'],
    [190, undefined, 'credential'],
    [299, undefined, 'credential'],
    [131050, 'retryable', 'policy'],
    [368, undefined, 'policy'],
    [130429, undefined, 'throughput'],
    [131056, undefined, 'pair_rate_limit'],
    [131026, undefined, 'permanent'],
    [undefined, 'retryable', 'retryable'],
    [undefined, 'credential', 'credential'],
    [999999, 'account_blocked', 'policy'],
    [null, undefined, 'permanent'],
  ] as const)('stores code %s (class %s) with category %s', (code, errorClass, category) => {
    expect(errorCategoryOf(code, errorClass)).toBe(category);
  });

  it('flags the rate limits, each with its default wait', () => {
    expect([4, 80007, 130429, 131056].filter(isRateLimit)).toEqual([4, 80007, 130429, 131056]);
    expect([1, 2, 131000, 190, 368, 131047, undefined].some((c) => isRateLimit(c))).toBe(false);
    expect(defaultRetryAfterSeconds(131056)).toBe(60);
    expect(defaultRetryAfterSeconds(130429)).toBe(1);
    expect(defaultRetryAfterSeconds(undefined)).toBe(1);
  });

  it('lists every code at most once with a consistent class and category', () => {
    for (const code of [
      0, 1, 2, 3, 4, 10, 190, 368, 80007, 130429, 130497, 131000, 131016, 131031, 131042, 131047, 131048, 131049,
      131050, 131056, 131057, 133004,
    ]) {
      const entry = metaErrorOf(code)!;
      expect(entry).toBeDefined();
      if (entry.errorClass === 'retryable')
        expect(['retryable', 'throughput', 'pair_rate_limit']).toContain(entry.category);
      if (entry.category === 'throughput' || entry.category === 'pair_rate_limit') expect(entry.rateLimit).toBe(true);
      if (entry.errorClass === 'credential') expect(entry.category).toBe('credential');
      if (entry.rateLimit) expect(entry.errorClass).toBe('retryable');
    }
  });
});
