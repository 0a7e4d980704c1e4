/**
 * Requests in flight: the count now, and the most at once since the last look. A saturated receiver's count falls to
 * a few every time a commit answers its batch and rises again within its window, so a count taken at one moment says
 * "not saturated" now and then in the middle of a burst; the peak does not. But a peak is also reached by a burst of
 * a few milliseconds far from saturation. Hence `Saturation`.
 */
export class InFlight {
  private current = 0;
  private peak = 0;

  enter(): void {
    if (++this.current > this.peak) this.peak = this.current;
  }

  leave(): void {
    this.current--;
  }

  get count(): number {
    return this.current;
  }

  /** The most in flight at once since the last call; the next call counts from those in flight now. */
  takePeak(): number {
    const peak = this.peak;
    this.peak = this.current;
    return peak;
  }
}

/**
 * Saturated or not, judged once per tick with a hysteresis: it starts when `threshold` requests are waiting at the
 * tick itself (a receiver that has them at an arbitrary moment is behind, not in a short burst) and lasts while each
 * tick's peak reaches `threshold` (so the commits answering their batches mid-burst do not end it); a tick whose
 * peak stays below ends it.
 */
export class Saturation {
  private saturated = false;

  constructor(private readonly threshold: number) {}

  tick(inFlight: InFlight): boolean {
    const peak = inFlight.takePeak();
    this.saturated = this.saturated ? peak >= this.threshold : inFlight.count >= this.threshold;
    return this.saturated;
  }
}
