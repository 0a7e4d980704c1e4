import { inspect } from 'node:util';

export interface PollOptions<T> {
  /** Whether a value ends the wait (default: any truthy value). */
  done?: (value: T) => boolean;
  timeoutMs?: number;
  intervalMs?: number;
  /**
   * What is awaited: when the time is up, `poll` throws "timed out waiting for <what>" with the last value or error.
   * Without it, it returns the last value (the caller's `expect` then shows what it was) or throws the last error.
   */
  what?: string;
}

/**
 * The one polling loop of the tests (factories' `eventually`, webhooks' `waitFor` and the specs' own waits): calls
 * `probe` until its value is done, a probe that throws counting as not done yet. The default ceiling (90 s) is for a
 * slow, busy host (`./scripts/test.sh --slow-host`); a wait that succeeds returns as soon as its condition holds.
 */
export async function poll<T>(
  probe: () => Promise<T> | T,
  { done = (v) => Boolean(v), timeoutMs = 90_000, intervalMs = 100, what }: PollOptions<T> = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: { value: T } | { error: unknown };
    try {
      const value = await probe();
      if (done(value)) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() > deadline) {
      if (what !== undefined)
        throw new Error(
          `timed out waiting for ${what}: ${'error' in last ? inspect(last.error) : `last ${inspect(last.value)}`}`,
        );
      if ('error' in last) throw last.error;
      return last.value;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
