import { InFlight, Saturation } from './in-flight.js';

const enter = (f: InFlight, n: number) => {
  for (let i = 0; i < n; i++) f.enter();
};
const leave = (f: InFlight, n: number) => {
  for (let i = 0; i < n; i++) f.leave();
};

describe('InFlight', () => {
  it('reports the most requests waiting at once since the last look, even when most were answered before it', () => {
    const f = new InFlight();
    enter(f, 40);
    // A commit answers its batch just before the tick: 3 left waiting, 40 at once during the tick.
    leave(f, 37);
    expect(f.count).toBe(3);
    expect(f.takePeak()).toBe(40);
    // The next tick counts from the 3 still waiting, plus what came since.
    f.enter();
    expect(f.takePeak()).toBe(4);
  });
});

describe('Saturation (what ReceiverPressure judges every tick)', () => {
  it('does not start on a short burst answered before the tick', () => {
    const f = new InFlight();
    const s = new Saturation(32);
    enter(f, 40);
    leave(f, 40);
    expect(s.tick(f)).toBe(false);
  });

  it('starts with threshold requests waiting at the tick, and lasts while each tick peaks at it though its end is low', () => {
    const f = new InFlight();
    const s = new Saturation(32);
    enter(f, 33);
    expect(s.tick(f)).toBe(true);
    // Mid-burst: a commit answers 32 of them, 31 new ones come, a commit answers 30: 2 waiting at the tick.
    leave(f, 32);
    enter(f, 31);
    leave(f, 30);
    expect(f.count).toBe(2);
    expect(s.tick(f)).toBe(true);
    // A tick whose peak stays below the threshold ends it.
    leave(f, 2);
    enter(f, 20);
    expect(s.tick(f)).toBe(false);
    // Starting again takes the count at a tick, not a peak: 40 at once, 20 left at the tick.
    enter(f, 20);
    leave(f, 20);
    expect(s.tick(f)).toBe(false);
    enter(f, 12);
    expect(s.tick(f)).toBe(true);
  });
});
