import { ThroughputWindows } from './throughput.js';

describe("the simulator's per-number throughput (Meta's 130429 over the tier in any one second)", () => {
  it('takes the tier in a second, refuses the next, and frees a slot once the oldest send is a second old', () => {
    const w = new ThroughputWindows();
    for (let i = 0; i < 80; i++) expect(w.take('n1', 80, 1000 + i * 10)).toBe(true);
    expect(w.take('n1', 80, 1795)).toBe(false);
    expect(w.refused('n1')).toBe(1);
    expect(w.take('n2', 80, 1795)).toBe(true);
    // The first send (t = 1000) leaves the window at t = 2000, the second (1010) at 2010.
    expect(w.take('n1', 80, 2000)).toBe(true);
    expect(w.take('n1', 80, 2005)).toBe(false);
  });

  it('counts a send stamped before one already taken (its body read later) in its own second', () => {
    const w = new ThroughputWindows();
    expect(w.take('n1', 3, 1000)).toBe(true);
    expect(w.take('n1', 3, 1500)).toBe(true);
    // Arrived at 1200, its body finished after the one of 1500: kept in time order, it leaves the window at 2200.
    expect(w.take('n1', 3, 1200)).toBe(true);
    expect(w.take('n1', 3, 1900)).toBe(false);
    expect(w.take('n1', 3, 2100)).toBe(true); // 1000 has left: 1200, 1500, 2100
    expect(w.take('n1', 3, 2150)).toBe(false);
    expect(w.take('n1', 3, 2201)).toBe(true); // 1200 has left although it was taken after 1500
  });
});
