import { isRowId } from './row-id.js';

describe('isRowId', () => {
  it('accepts every positive safe integer: 64-bit ids above 2^31 and 2^32 included', () => {
    for (const id of [1, 2_147_483_647, 2_147_483_648, 3_000_000_000, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER])
      expect({ id, ok: isRowId(id) }).toEqual({ id, ok: true });
  });

  it('refuses what cannot name a row, such as a twenty-digit path id that parseInt rounded', () => {
    for (const id of [
      0,
      -1,
      1.5,
      NaN,
      Infinity,
      2 ** 53,
      parseInt('99999999999999999999', 10),
      parseInt('9007199254740993', 10),
    ]) {
      expect({ id, ok: isRowId(id) }).toEqual({ id, ok: false });
    }
  });
});
