/**
 * At most `limit` holders per key at once (a business account's long polls, its media downloads) in this process:
 * one account cannot take every slot of a shared resource. `take` answers a release function, or undefined when
 * the key's slots are all taken (the caller refuses: 429).
 */
export class PerKeySlots {
  private readonly held = new Map<string, number>();

  constructor(readonly limit: number) {}

  take(key: string): (() => void) | undefined {
    const n = this.held.get(key) ?? 0;
    if (n >= this.limit) return undefined;
    this.held.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }

  /** Slots of `key` held now. */
  inUse(key: string): number {
    return this.held.get(key) ?? 0;
  }
}
