/** A configuration problem: one line per variable, naming it. Boot prints it and exits 1. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates environment variables, collecting every problem instead of stopping at the first. */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  private fail<T>(name: string, why: string, fallback: T): T {
    this.problems.push(`${name} ${why}`);
    return fallback;
  }

  /** Whether the variable is set to something other than blanks. */
  has(name: string): boolean {
    return this.raw(name) !== undefined;
  }

  /** A problem found by a rule across variables (the message names them). */
  problem(message: string): void {
    this.problems.push(message);
  }

  string(name: string, opts: { default?: string; minLength?: number; pattern?: RegExp } = {}): string {
    const value = this.raw(name) ?? opts.default;
    if (value === undefined) return this.fail(name, 'is required', '');
    if (opts.minLength && value.length < opts.minLength) {
      return this.fail(name, `must be at least ${opts.minLength} characters`, '');
    }
    if (opts.pattern && !opts.pattern.test(value)) return this.fail(name, `must match ${opts.pattern}`, '');
    return value;
  }

  int(name: string, opts: { default?: number; min?: number; max?: number }): number {
    const value = this.raw(name);
    if (value === undefined) {
      return opts.default ?? this.fail(name, 'is required', 0);
    }
    if (!/^-?\d+$/.test(value)) return this.fail(name, `must be an integer (got "${value}")`, 0);
    const n = Number(value);
    if (opts.min !== undefined && n < opts.min) return this.fail(name, `must be >= ${opts.min}`, 0);
    if (opts.max !== undefined && n > opts.max) return this.fail(name, `must be <= ${opts.max}`, 0);
    return n;
  }

  /** A positive rate, decimals allowed ("0.2": one every 5 s), at least `min`. */
  rate(name: string, opts: { default: number; min: number }): number {
    const value = this.raw(name);
    if (value === undefined) return opts.default;
    if (!/^\d+(\.\d+)?$/.test(value)) return this.fail(name, `must be a positive number (got "${value}")`, 0);
    const n = Number(value);
    if (n < opts.min) return this.fail(name, `must be >= ${opts.min}`, 0);
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (['true', '1', 'yes'].includes(value.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(value.toLowerCase())) return false;
    return this.fail(name, `must be true or false (got "${value}")`, fallback);
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const value = this.raw(name) ?? fallback;
    if (!values.includes(value as T)) return this.fail(name, `must be one of ${values.join(', ')}`, fallback);
    return value as T;
  }

  url(name: string, protocols: string[]): string {
    const value = this.raw(name);
    if (value === undefined) return this.fail(name, 'is required', '');
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) {
        return this.fail(name, `must be a ${protocols.join(' or ')}// URL`, '');
      }
      return value;
    } catch {
      return this.fail(name, 'must be a valid URL', '');
    }
  }

  /** A value with its own syntax: `parse` returns the value, or throws an Error whose message says what is wrong. */
  parsed<T>(name: string, fallback: T, parse: (value: string) => T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    try {
      return parse(value);
    } catch (error) {
      return this.fail(name, (error as Error).message, fallback);
    }
  }

  list(name: string): string[] {
    const value = this.raw(name);
    return value
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  }

  /** A 32-byte key given as 64 hex characters or as base64. */
  key32(name: string): Buffer {
    const value = this.raw(name);
    if (value === undefined) return this.fail(name, 'is required (32 bytes, hex or base64)', Buffer.alloc(0));
    return this.parseKey32(name, value);
  }

  private parseKey32(name: string, value: string): Buffer {
    const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
    if (key.length !== 32) {
      return this.fail(name, `must be 32 bytes as 64 hex characters or base64 (got ${key.length} bytes)`, key);
    }
    return key;
  }

  /**
   * Several 32-byte keys with ids, newest first: `kid1:<key>,kid0:<key>` in `name`; or one key in `single`
   * (the older variable), which gets the id `k0`. Exactly one of the two variables.
   */
  keyRing(name: string, single: string): { id: string; key: Buffer }[] {
    const ring = this.raw(name);
    if (ring !== undefined && this.raw(single) !== undefined)
      return this.fail(name, `and ${single} are both set: keep only ${name}`, []);
    if (ring === undefined) return [{ id: 'k0', key: this.key32(single) }];
    const keys = ring
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
      .map((item) => {
        const colon = item.indexOf(':');
        const id = colon > 0 ? item.slice(0, colon) : '';
        if (!/^[A-Za-z0-9_-]{1,32}$/.test(id))
          this.fail(name, 'must be a comma-separated list of <id>:<key> (id: 1-32 letters, digits, _ or -)', null);
        return { id, key: this.parseKey32(name, item.slice(colon + 1)) };
      });
    if (new Set(keys.map((k) => k.id)).size !== keys.length) this.fail(name, 'has the same key id twice', null);
    return keys;
  }

  throwIfInvalid(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}
