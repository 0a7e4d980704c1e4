import { TooManyAttempts } from '../errors/domain-errors.js';

/** Who holds a slot: one key per share (e.g. `{ organization: id, session: id }`). */
export type SlotOwner<S extends string> = Record<S, string>;

export interface SlotQuotaLimits<S extends string> {
  /** Slots in this process for everyone together: the backstop. */
  total: number;
  /** Slots one key of each share may hold at once (an organization, a session…). */
  per: Record<S, number>;
  /** Named in the 429's message: "long polls", "media transfers". */
  what: string;
}

/**
 * Fair shares of something held open in one process (long polls, media transfers): a slot is taken only if
 * the owner's every share and the total have room, and it is given back by the release function (idempotent).
 * A refusal is a 429 to the owner past its share, so one tenant (or one session) cannot take everyone's slots;
 * the total only bites when many owners are busy at once.
 */
export class SlotQuota<S extends string> {
  private readonly held = new Map<string, number>();
  private used = 0;

  constructor(private readonly limits: SlotQuotaLimits<S>) {}

  /** Slots held now in this process. */
  get size(): number {
    return this.used;
  }

  /** Slots the owner's key of one share holds now. */
  heldBy(share: S, key: string): number {
    return this.held.get(`${share}\u0000${key}`) ?? 0;
  }

  /** Takes a slot or throws TooManyAttempts (429 + Retry-After) naming the share that is full. */
  acquire(owner: SlotOwner<S>, retryAfterSeconds = 1): () => void {
    const keys = (Object.keys(this.limits.per) as S[]).map(
      (share) => [share, `${share}\u0000${owner[share]}`] as const,
    );
    for (const [share, key] of keys) {
      const limit = this.limits.per[share];
      if ((this.held.get(key) ?? 0) >= limit)
        throw new TooManyAttempts(
          `Too many ${this.limits.what} open for this ${share} (at most ${limit} at once); try again shortly`,
          retryAfterSeconds,
        );
    }
    if (this.used >= this.limits.total)
      throw new TooManyAttempts(
        `Too many ${this.limits.what} open on this server; try again shortly`,
        retryAfterSeconds,
      );
    for (const [, key] of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    this.used++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      for (const [, key] of keys) {
        const n = (this.held.get(key) ?? 1) - 1;
        if (n > 0) this.held.set(key, n);
        else this.held.delete(key);
      }
    };
  }
}
