import { InFlight } from './in-flight.js';

describe('InFlight (what ReceiverPressure reads every tick)', () => {
  it('reports the most requests waiting at once since the last look, even when most were answered before it', () => {
    const f = new InFlight();
    for (let i = 0; i < 40; i++) f.enter();
    // A commit answers its batch just before the tick: 3 left waiting, 40 at once during the tick.
    for (let i = 0; i < 37; i++) f.leave();
    expect(f.takePeak()).toBe(40);
    // The next tick counts from the 3 still waiting, plus what came since.
    f.enter();
    expect(f.takePeak()).toBe(4);
  });

  it('reports 0 once everything is answered and nothing new came', () => {
    const f = new InFlight();
    f.enter();
    f.leave();
    expect(f.takePeak()).toBe(1);
    expect(f.takePeak()).toBe(0);
  });
});
