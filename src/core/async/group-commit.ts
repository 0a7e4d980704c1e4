import { logContext } from '../logging/log-context.js';

/**
 * Group commit: concurrent callers' items are written together, one `flush` (one statement, one commit) per
 * batch, and each caller's promise settles only when the flush that holds its item has settled: with its own
 * result when it committed, with the flush's error (for every item of it) when it did not.
 *
 * When a batch is cut:
 * - `windowMs > 0` (the webhook receiver): a batch opens with its first item and is flushed `windowMs` later, or
 *   as soon as it holds `maxItems`. At low load a window holds one item and costs `windowMs` of latency; under
 *   load the windows fill and the per-item cost of a commit shrinks.
 * - `windowMs = 0` (the send path): no added wait. Items arriving in the same turn of the event loop go together,
 *   and while `maxInFlight` flushes are running, new items queue and go in the next flush as soon as one
 *   ends: at low load every item is flushed at once on its own, under load the batches grow by themselves.
 *
 * A flush belongs to all of its callers, so it runs outside their log contexts (a line it logs must not carry the
 * id of whichever request opened the batch); each caller, resumed in its own context, logs its own outcome.
 */
export class GroupCommit<I, R> {
  private pending: { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxInFlight: number;

  constructor(
    /** Writes the items in one unit; resolves with one result per item, in order, or rejects for all. */
    private readonly flush: (items: I[]) => Promise<R[]>,
    private readonly opts: { windowMs: number; maxItems: number; maxInFlight?: number },
  ) {
    this.maxInFlight = opts.maxInFlight ?? Infinity;
  }

  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.opts.maxItems) this.flushNow();
      else this.schedule();
    });
  }

  /** Waits for every flush started so far (after flushing what is pending): for a graceful shutdown. */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.inFlight.size > 0) {
      this.flushNow();
      await Promise.race([...this.inFlight]).catch(() => undefined);
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.opts.windowMs > 0) this.timer = setTimeout(() => this.flushNow(), this.opts.windowMs);
    else setImmediate(() => this.flushNow());
  }

  private flushNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = false;
    // At the in-flight limit what is pending waits: the flush that ends first takes it.
    while (this.pending.length > 0 && this.inFlight.size < this.maxInFlight) {
      const batch = this.pending.splice(0, this.opts.maxItems);
      const run = logContext
        .detached(() => this.flush(batch.map((p) => p.item)))
        .then(
          (results) => {
            if (results.length !== batch.length)
              throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
            batch.forEach((p, i) => p.resolve(results[i]!));
          },
          (err: unknown) => batch.forEach((p) => p.reject(err)),
        );
      const tracked: Promise<void> = run
        .catch((err: unknown) => batch.forEach((p) => p.reject(err)))
        .finally(() => {
          this.inFlight.delete(tracked);
          if (this.pending.length > 0) this.flushNow();
        });
      this.inFlight.add(tracked);
    }
  }
}
