import { GroupCommit } from './group-commit.js';

/** A flush that records its batches and settles only when the test says so. */
function recordingFlush() {
  const batches: number[][] = [];
  const gates: Array<(fail?: Error) => void> = [];
  const flush = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      batches.push(items);
      gates.push((fail) => (fail ? reject(fail) : resolve(items.map((i) => i * 10))));
    });
  return { batches, gates, flush };
}
const turn = () => new Promise((r) => setImmediate(r));

describe('GroupCommit without a wait (windowMs 0)', () => {
  it('flushes what arrived in one turn together, queues while the in-flight limit is reached, then sends the queue as one batch', async () => {
    const { batches, gates, flush } = recordingFlush();
    const group = new GroupCommit(flush, { windowMs: 0, maxItems: 100, maxInFlight: 1 });
    const first = [1, 2, 3].map((i) => group.add(i));
    await turn();
    expect(batches).toEqual([[1, 2, 3]]);

    const later = [4, 5].map((i) => group.add(i));
    await turn();
    expect(batches).toHaveLength(1); // the first flush is still running
    gates[0]!();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    await turn();
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    gates[1]!();
    expect(await Promise.all(later)).toEqual([40, 50]);
  });

  it('rejects every item of a failed flush, and only those', async () => {
    const { batches, gates, flush } = recordingFlush();
    const group = new GroupCommit(flush, { windowMs: 0, maxItems: 2, maxInFlight: 2 });
    const results = [1, 2, 3].map((i) =>
      group.add(i).then(
        (r) => ({ r }),
        (e: Error) => ({ e: e.message }),
      ),
    );
    await turn();
    expect(batches).toEqual([[1, 2], [3]]); // maxItems cuts the batch
    gates[0]!(new Error('insert failed'));
    gates[1]!();
    expect(await Promise.all(results)).toEqual([{ e: 'insert failed' }, { e: 'insert failed' }, { r: 30 }]);
  });

  it('drain waits for queued and running flushes', async () => {
    const { gates, flush } = recordingFlush();
    const group = new GroupCommit(flush, { windowMs: 0, maxItems: 10, maxInFlight: 1 });
    const a = group.add(1);
    await turn();
    const b = group.add(2);
    let drained = false;
    const draining = group.drain().then(() => (drained = true));
    gates[0]!();
    await a;
    await turn();
    expect(drained).toBe(false);
    gates[1]!();
    await draining;
    expect(await b).toBe(20);
  });
});
