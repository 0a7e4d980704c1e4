/**
 * Meta's per-number throughput (reference sections 4 and 7): a phone number takes at most its tier's messages in any
 * one-second window (`throughput.level`: STANDARD 80/s, HIGH 1,000/s; a number shared with the WhatsApp Business app,
 * `COEXISTENCE` here, 20/s); a send over it is refused with 130429. Counted per number over a sliding 1 s window of
 * the sends the simulator answered (refused ones included, as Meta counts requests on the number).
 */
export const THROUGHPUT_PER_SECOND: Record<string, number> = { STANDARD: 80, HIGH: 1000, COEXISTENCE: 20 };

/** The messages per second a number's `throughput.level` allows (an unknown level counts as STANDARD). */
export const perSecondOf = (level: string | undefined): number =>
  THROUGHPUT_PER_SECOND[level ?? ''] ?? THROUGHPUT_PER_SECOND.STANDARD!;

const WINDOW_MS = 1000;

/** The send times of each number in the last second, oldest first (a ring kept as an array and a head index). */
export class ThroughputWindows {
  private readonly windows = new Map<string, { times: number[]; head: number }>();
  /** 130429s answered, per number (for tests and the bench: GET /_sim/throughput). */
  private readonly refusedCount = new Map<string, number>();

  /**
   * Takes a slot for a send on the number at `now` (ms, the wall clock the simulator records sends with); false when its
   * last second already holds `limit` sends.
   */
  take(phoneNumberId: string, limit: number, now = Date.now()): boolean {
    let w = this.windows.get(phoneNumberId);
    if (!w) this.windows.set(phoneNumberId, (w = { times: [], head: 0 }));
    while (w.head < w.times.length && w.times[w.head]! <= now - WINDOW_MS) w.head++;
    if (w.head > 4096) {
      w.times = w.times.slice(w.head);
      w.head = 0;
    }
    if (w.times.length - w.head >= limit) {
      this.refusedCount.set(phoneNumberId, this.refused(phoneNumberId) + 1);
      return false;
    }
    // Sends are stamped on arrival and may finish reading their bodies out of order: keep the window sorted.
    let at = w.times.length;
    while (at > w.head && w.times[at - 1]! > now) at--;
    w.times.splice(at, 0, now);
    return true;
  }

  refused(phoneNumberId: string): number {
    return this.refusedCount.get(phoneNumberId) ?? 0;
  }
}
