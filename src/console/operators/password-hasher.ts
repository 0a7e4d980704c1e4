import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../../core/config/app-config.js';
import { Semaphore } from '../../core/async/semaphore.js';
import { TemporarilyUnavailable } from '../../core/errors/domain-errors.js';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

const R = 8;
const P = 1;
const KEYLEN = 64;
/** Per permit, this many requests may wait for scrypt; past it the answer is 503 (each waiter holds a request open). */
const WAITING_PER_PERMIT = 32;
/** Hashes with a larger N than this are refused rather than computed (a stored value is not trusted to size memory). */
const MAX_LOG2_N = 20;

function derive(password: string, salt: Buffer, params: ScryptParams, keylen: number): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; Node's default maxmem (32 MiB) is below what N = 2^17 takes.
  const maxmem = 128 * params.N * params.r + 16 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, { ...params, maxmem }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function encode(params: ScryptParams, salt: Buffer, key: Buffer): string {
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** The parameters a stored hash was made with, or null when it is not one of ours. */
export function parseHash(stored: string): (ScryptParams & { salt: Buffer; hash: Buffer }) | null {
  const [scheme, n, r, p, salt, hash, ...rest] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash || rest.length > 0) return null;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const powerOfTwo = Number.isInteger(params.N) && params.N > 1 && (params.N & (params.N - 1)) === 0;
  if (
    !powerOfTwo ||
    params.N > 2 ** MAX_LOG2_N ||
    !(params.r >= 1 && params.r <= 32) ||
    !(params.p >= 1 && params.p <= 16)
  )
    return null;
  return { ...params, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

/** What the hasher reads of the configuration. */
export type HasherConfig = Pick<AppConfig, 'passwordHashCost' | 'scryptConcurrency'>;

export interface Verification {
  valid: boolean;
  /** The hash is weaker than today's parameters: store a fresh one now that the password is known. */
  needsRehash: boolean;
}

/**
 * scrypt password hashes, self-describing (`scrypt$N$r$p$salt$hash`, base64url), so the cost can be raised
 * (PASSWORD_HASH_COST = log2 N, default 17: N = 131072, r = 8, 128 MiB) while older hashes keep verifying;
 * an older hash is replaced at the next successful login.
 *
 * At most SCRYPT_CONCURRENCY derivations run at once per process (each holds 128·N·r bytes, 128 MiB at the
 * default cost, for ~0.3 s): without the bound, a burst of logins or signups from many addresses allocated
 * 128 MiB each at once. The others wait their turn (up to 32 per permit, then 503 + Retry-After).
 */
@Injectable()
export class PasswordHasher {
  private readonly params: ScryptParams;
  /** Verified against when the email is unknown, so both failures cost the same time. */
  private readonly dummyHash: string;

  private readonly gate: Semaphore;

  constructor(@Inject(AppConfig) config: HasherConfig) {
    this.params = { N: 2 ** config.passwordHashCost, r: R, p: P };
    this.gate = new Semaphore(config.scryptConcurrency, config.scryptConcurrency * WAITING_PER_PERMIT);
    this.dummyHash = encode(this.params, Buffer.alloc(16), Buffer.alloc(KEYLEN));
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    return encode(this.params, salt, await this.derive(password, salt, this.params, KEYLEN));
  }

  /** Verifies against `stored`, or against a dummy hash of the same cost when there is none. */
  async verify(password: string, stored: string | undefined): Promise<Verification> {
    const parsed = parseHash(stored ?? this.dummyHash);
    if (!parsed) return { valid: false, needsRehash: false };
    const key = await this.derive(password, parsed.salt, parsed, parsed.hash.length);
    const valid = stored !== undefined && timingSafeEqual(key, parsed.hash);
    // Only ever upgraded: a deployment that lowers PASSWORD_HASH_COST (tests do) leaves stronger hashes alone.
    const weaker = parsed.N < this.params.N || parsed.r < this.params.r || parsed.hash.length < KEYLEN;
    return { valid, needsRehash: valid && weaker };
  }

  /** scrypt derivations running now in this process (never above SCRYPT_CONCURRENCY). */
  get running(): number {
    return this.gate.active;
  }

  private async derive(password: string, salt: Buffer, params: ScryptParams, keylen: number): Promise<Buffer> {
    const done = await this.gate.run(() => derive(password, salt, params, keylen));
    if (!done) throw new TemporarilyUnavailable('Too many sign-ins in progress; try again shortly', 1);
    return done.value;
  }
}
