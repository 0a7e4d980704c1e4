import { parameterProblems } from './pre-send-checks.js';

const counts = { header: 1, body: 2, buttons: { '0': 1 }, names: { header: ['1'], body: ['1', '2'] } };
const text = (t: string, parameter_name?: string) => ({ type: 'text', text: t, parameter_name });

describe('parameterProblems', () => {
  it('accepts components that match the synced template', () => {
    expect(
      parameterProblems(counts, 'POSITIONAL', [
        { type: 'header', parameters: [text('ORD-1')] },
        { type: 'body', parameters: [text('Priya'), text('ORD-1')] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [text('ORD-1')] },
      ]),
    ).toEqual([]);
  });

  it('names every mismatch in one components error', () => {
    const problems = parameterProblems(counts, 'POSITIONAL', [{ type: 'body', parameters: [text('Priya')] }]);
    expect(problems).toEqual([
      {
        field: 'components',
        message:
          'header expects 1 parameter, got 0; body expects 2 parameters, got 1; button 0 expects 1 parameter, got 0',
      },
    ]);
  });

  it('requires the placeholder names of a NAMED template', () => {
    const named = { header: 0, body: 1, buttons: {}, names: { header: [], body: ['first_name'] } };
    expect(parameterProblems(named, 'NAMED', [{ type: 'body', parameters: [text('Priya', 'first_name')] }])).toEqual(
      [],
    );
    expect(parameterProblems(named, 'NAMED', [{ type: 'body', parameters: [text('Priya', 'name')] }])).toEqual([
      { field: 'components', message: 'body needs parameter_name first_name' },
    ]);
  });
});
