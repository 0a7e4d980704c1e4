import { inWindow, readWindowOf, withinWindow } from './read-window.js';

describe('read windows (issue 29, finding 5)', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 10, 0, s));

  it('opens from the takeover (inclusive) and ends just before the cut-off', () => {
    expect(readWindowOf({ heldSince: null, readableUntil: null })).toEqual({});
    const window = readWindowOf({ heldSince: at(10), readableUntil: at(20) });
    expect(window).toEqual({ since: at(10), until: new Date(at(20).getTime() - 1) });
    expect([at(9), at(10), at(19), at(20)].map((d) => inWindow(d, window))).toEqual([false, true, true, false]);
    expect(inWindow(at(0), undefined)).toBe(true);
  });

  it("narrows a list's since/until to the window, never widens it", () => {
    const window = { since: at(10), until: at(20) };
    const filter: { kind: string; since?: Date; until?: Date } = { kind: 'x' };
    expect(withinWindow(filter, window)).toEqual({ kind: 'x', since: at(10), until: at(20) });
    expect(withinWindow({ since: at(15), until: at(30) }, window)).toEqual({ since: at(15), until: at(20) });
    expect(withinWindow({ since: at(0), until: at(12) }, window)).toEqual({ since: at(10), until: at(12) });
    expect(withinWindow({ since: at(5) }, {})).toEqual({ since: at(5), until: undefined });
    expect(withinWindow({ until: at(5) }, undefined)).toEqual({ until: at(5) });
  });
});
