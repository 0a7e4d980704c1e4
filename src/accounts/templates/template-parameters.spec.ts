import { countParameters } from './template-parameters.js';

describe('countParameters', () => {
  it('counts positional header, body and URL button parameters', () => {
    const counts = countParameters([
      { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}' },
      { type: 'BODY', text: 'Hi {{1}}, order {{2}} is out for delivery. Reply {{1}} to confirm.' },
      { type: 'FOOTER', text: 'Parcel Co' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'OK' },
          { type: 'URL', text: 'Track', url: 'https://t.example/{{1}}' },
        ],
      },
    ]);
    expect(counts).toEqual({ header: 1, body: 2, buttons: { '1': 1 }, names: { header: ['1'], body: ['1', '2'] } });
  });

  it('counts a media header as one parameter and reads named placeholders', () => {
    const counts = countParameters([
      { type: 'HEADER', format: 'IMAGE' },
      { type: 'BODY', text: 'Hello {{first_name}}, your code is {{ code }}.' },
    ]);
    expect(counts.header).toBe(1);
    expect(counts.body).toBe(2);
    expect(counts.names.body).toEqual(['first_name', 'code']);
  });

  it('expects nothing of a static template', () => {
    expect(countParameters([{ type: 'BODY', text: 'Your parcel has arrived.' }])).toEqual({
      header: 0,
      body: 0,
      buttons: {},
      names: { header: [], body: [] },
    });
    expect(countParameters(undefined).body).toBe(0);
  });
});
