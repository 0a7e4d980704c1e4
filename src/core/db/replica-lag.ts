/** A WAL position (`pg_lsn` as text, `16/B374D848`) as a number to compare. */
export function parseLsn(text: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!m) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

/** Positions kept at most: one a second is an hour of a stuck replica; past it the newest middle ones go. */
const KEPT = 3600;

/**
 * How far a standby is behind its primary, in time: the primary's WAL position is sampled at each check, and the lag
 * is the age of the oldest sample the standby has not replayed yet (0 once it has replayed them all). Unlike
 * `now() - pg_last_xact_replay_timestamp()` on the standby, an idle primary (nothing to replay) is no lag, and a
 * paused or slow replay is seen as soon as the primary writes anything. Its resolution is the check interval: the
 * replica is at least this far behind, at most one interval more.
 */
export class ReplicaLag {
  /** The primary's positions the standby had not replayed when last asked, oldest first, increasing. */
  private pending: Array<{ lsn: bigint; at: number }> = [];

  /** The primary's WAL position at `at` (ms). */
  primaryAt(lsn: bigint, at: number): void {
    const last = this.pending.at(-1);
    if (last && lsn <= last.lsn) return;
    this.pending.push({ lsn, at });
    // The oldest sample alone sets the lag: thin out the ones after it.
    if (this.pending.length > KEPT) this.pending.splice(1, 1);
  }

  /** The standby has replayed up to `lsn`: its lag at `now` (ms). */
  replayedTo(lsn: bigint, now: number): number {
    while (this.pending.length > 0 && this.pending[0]!.lsn <= lsn) this.pending.shift();
    const oldest = this.pending[0];
    return oldest ? Math.max(0, now - oldest.at) : 0;
  }

  /** Forget every sample (the standby was out of reach: its position is unknown until the next check). */
  reset(): void {
    this.pending = [];
  }
}
