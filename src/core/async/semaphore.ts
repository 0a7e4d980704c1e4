/**
 * At most `permits` tasks run at once; the rest wait in arrival order. `maxWaiting` bounds the queue: past it,
 * `run` refuses at once (the caller answers 503 rather than hold a request and its memory in an unbounded line).
 */
export class Semaphore {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly permits: number,
    private readonly maxWaiting = Number.POSITIVE_INFINITY,
  ) {}

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting for a permit now. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * A permit, once one is free (waiting in arrival order): the function that gives it back (once; later calls do
   * nothing). Null at once when the queue is full.
   */
  async acquire(): Promise<(() => void) | null> {
    if (this.running >= this.permits) {
      if (this.waiting.length >= this.maxWaiting) return null;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The permit passes straight to the next waiter (running stays the same), so no newcomer can overtake it.
      if (next) next();
      else this.running--;
    };
  }

  /** Runs `task` with a permit; null (task not run) when the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<{ value: T } | null> {
    const release = await this.acquire();
    if (!release) return null;
    try {
      return { value: await task() };
    } finally {
      release();
    }
  }
}
