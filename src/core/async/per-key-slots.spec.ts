import { PerKeySlots } from './per-key-slots.js';

describe('PerKeySlots', () => {
  it('gives each key its own limit, and a slot back once released (once, however often release is called)', () => {
    const slots = new PerKeySlots(2);
    const a1 = slots.take('a');
    const a2 = slots.take('a');
    expect(a1).toBeDefined();
    expect(a2).toBeDefined();
    expect(slots.take('a')).toBeUndefined();
    expect(slots.take('b')).toBeDefined();
    a1!();
    a1!();
    expect(slots.inUse('a')).toBe(1);
    expect(slots.take('a')).toBeDefined();
    expect(slots.take('a')).toBeUndefined();
  });

  it('forgets a key whose slots are all released', () => {
    const slots = new PerKeySlots(1);
    slots.take('a')!();
    expect(slots.inUse('a')).toBe(0);
    expect(slots.take('a')).toBeDefined();
  });
});
