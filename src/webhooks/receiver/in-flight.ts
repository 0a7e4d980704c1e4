/**
 * Requests in flight, and the most at once since the last look. The peak, not the count at the look: a saturated
 * receiver's count falls to a few every time a commit answers its batch and rises again within its window, so a count
 * taken at any one moment says "not saturated" now and then in the middle of a burst.
 */
export class InFlight {
  private count = 0;
  private peak = 0;

  enter(): void {
    if (++this.count > this.peak) this.peak = this.count;
  }

  leave(): void {
    this.count--;
  }

  /** The most in flight at once since the last call; the next call counts from those in flight now. */
  takePeak(): number {
    const peak = this.peak;
    this.peak = this.count;
    return peak;
  }
}
