import { Semaphore } from './semaphore.js';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('Semaphore', () => {
  it('runs at most `permits` tasks at once, the others in arrival order as permits free up', async () => {
    const s = new Semaphore(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((g, i) => s.run(async () => (started.push(i), await g.promise, i)));
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect([s.active, s.queued]).toEqual([2, 2]);
    gates[1]!.resolve();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.resolve();
    gates[2]!.resolve();
    gates[3]!.resolve();
    expect(await Promise.all(runs)).toEqual([{ value: 0 }, { value: 1 }, { value: 2 }, { value: 3 }]);
    expect([s.active, s.queued]).toEqual([0, 0]);
  });

  it('refuses (null, task not run) past maxWaiting, and frees the permit when a task throws', async () => {
    const s = new Semaphore(1, 1);
    const gate = deferred();
    const first = s.run(() => gate.promise);
    const second = s.run(() => Promise.reject(new Error('boom')));
    let ran = false;
    expect(await s.run(async () => (ran = true))).toBeNull();
    expect(ran).toBe(false);
    gate.resolve();
    await first;
    await expect(second).rejects.toThrow('boom');
    expect(await s.run(async () => 'after')).toEqual({ value: 'after' });
    expect(s.active).toBe(0);
  });
});
