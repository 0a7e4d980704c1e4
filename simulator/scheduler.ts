/**
 * Owns every timer the simulator starts (status sequences, webhook retries, hanging responses) so that
 * `close()` can cancel them all and a test process exits without dangling handles.
 */
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly sleepers = new Set<(elapsed: boolean) => void>();
  private closed = false;

  get isClosed(): boolean {
    return this.closed;
  }

  after(ms: number, fn: () => void): void {
    if (this.closed) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        fn();
      },
      Math.max(0, ms),
    );
    this.timers.add(timer);
  }

  /** Resolves true after `ms`, or false as soon as the scheduler closes (callers then stop). */
  sleep(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = (elapsed: boolean) => {
        this.sleepers.delete(wake);
        resolve(elapsed);
      };
      this.sleepers.add(wake);
      this.after(ms, () => wake(true));
    });
  }

  close(): void {
    this.closed = true;
    this.timers.forEach((t) => clearTimeout(t));
    this.timers.clear();
    [...this.sleepers].forEach((wake) => wake(false));
  }
}
