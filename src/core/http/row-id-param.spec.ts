import { NotFound } from '../errors/domain-errors.js';
import { ParseRowIdPipe } from './row-id-param.js';

describe('ParseRowIdPipe (a path id: one answer for every id that names no row)', () => {
  const pipe = new ParseRowIdPipe('Campaign not found');

  it.each([
    ['1', 1],
    ['42', 42],
    ['30004000000028', 30004000000028],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('%s is row id %d', (value, id) => {
    expect(pipe.transform(value)).toBe(id);
  });

  it.each(['0', '-5', 'abc', '1.5', '12abc', '1e3', ' 7', '', '9007199254740993', '99999999999999999999'])(
    '%j is 404 with the route’s message',
    (value) => {
      expect(() => pipe.transform(value)).toThrow(new NotFound('Campaign not found'));
    },
  );
});
