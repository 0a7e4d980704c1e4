/**
 * Group commit: concurrent callers' items are written together, one `flush` (one statement, one commit) per
 * short window or per `maxItems`, and each caller's promise settles only when the flush that holds its item
 * has settled: with its own result when it committed, with the flush's error (for every item of it) when it
 * did not. At low load a window holds one item and costs `windowMs` of latency; under load the windows fill
 * and the per-item cost of a commit shrinks.
 */
export class GroupCommit<I, R> {
  private pending: { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    /** Writes the items in one unit; resolves with one result per item, in order, or rejects for all. */
    private readonly flush: (items: I[]) => Promise<R[]>,
    private readonly opts: { windowMs: number; maxItems: number },
  ) {}

  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.opts.maxItems) this.flushNow();
      else if (!this.timer) this.timer = setTimeout(() => this.flushNow(), this.opts.windowMs);
    });
  }

  /** Waits for every flush started so far (after flushing what is pending): for a graceful shutdown. */
  async drain(): Promise<void> {
    this.flushNow();
    await Promise.allSettled([...this.inFlight]);
  }

  private flushNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const run = this.flush(batch.map((p) => p.item)).then(
      (results) => {
        if (results.length !== batch.length) throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
        batch.forEach((p, i) => p.resolve(results[i]!));
      },
      (err: unknown) => batch.forEach((p) => p.reject(err)),
    );
    const tracked = run.catch((err: unknown) => batch.forEach((p) => p.reject(err))).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}
