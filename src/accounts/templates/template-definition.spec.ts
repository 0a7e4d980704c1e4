import { checkTemplateComponents } from './template-definition.js';

const body = (text: string, examples?: string[]) => ({
  type: 'BODY',
  text,
  ...(examples ? { example: { body_text: [examples] } } : {}),
});
const fields = (errors: Array<{ field: string }>) => errors.map((e) => e.field);

describe('checkTemplateComponents (Meta’s rules, before Meta)', () => {
  it('accepts a full positional template: text header, body, footer, buttons, an example per variable', () => {
    expect(
      checkTemplateComponents(
        [
          { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['ORD-7781'] } },
          body('Hi {{1}}, order {{2}} ships today.', ['Priya', 'ORD-7781']),
          { type: 'FOOTER', text: 'Parcel Co' },
          {
            type: 'BUTTONS',
            buttons: [
              { type: 'URL', text: 'Track', url: 'https://t.example.com/{{1}}', example: ['https://t.example.com/1'] },
              { type: 'QUICK_REPLY', text: 'Stop' },
              { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+447700900500' },
            ],
          },
        ],
        'UTILITY',
        'POSITIONAL',
      ),
    ).toEqual([]);
  });

  it('needs a BODY with text', () => {
    expect(checkTemplateComponents([{ type: 'FOOTER', text: 'x' }], 'UTILITY', 'POSITIONAL')).toEqual([
      { field: 'components', message: expect.stringContaining('BODY') },
    ]);
    expect(fields(checkTemplateComponents([{ type: 'BODY', text: '  ' }], 'UTILITY', 'POSITIONAL'))).toEqual([
      'components.0.text',
    ]);
    // Meta writes an authentication template's body itself.
    expect(
      checkTemplateComponents([{ type: 'BODY', add_security_recommendation: true }], 'AUTHENTICATION', 'POSITIONAL'),
    ).toEqual([]);
  });

  it('needs one example per variable: a body with more variables than examples is refused, naming example.body_text', () => {
    const errors = checkTemplateComponents([body('Hi {{1}}, order {{2}}', ['Priya'])], 'UTILITY', 'POSITIONAL');
    expect(errors).toEqual([
      { field: 'components.0.example.body_text', message: expect.stringContaining('2 variables, 1 example') },
    ]);
    expect(fields(checkTemplateComponents([body('Hi {{1}}')], 'UTILITY', 'POSITIONAL'))).toEqual([
      'components.0.example.body_text',
    ]);
    expect(
      fields(
        checkTemplateComponents(
          [{ type: 'HEADER', text: 'Order {{1}}' }, body('Hi {{1}}', ['Priya'])],
          'UTILITY',
          'POSITIONAL',
        ),
      ),
    ).toEqual(['components.0.example.header_text']);
  });

  it('wants positional variables in sequence, named ones as lowercase names, each with its named example', () => {
    expect(fields(checkTemplateComponents([body('Hi {{2}}', ['x'])], 'UTILITY', 'POSITIONAL'))).toEqual([
      'components.0.text',
    ]);
    expect(fields(checkTemplateComponents([body('Hi {{Name}}', ['x'])], 'UTILITY', 'NAMED'))).toEqual([
      'components.0.text',
    ]);
    const named = (params: unknown[]) =>
      checkTemplateComponents(
        [{ type: 'BODY', text: 'Hi {{first_name}} from {{company}}', example: { body_text_named_params: params } }],
        'MARKETING',
        'NAMED',
      );
    expect(
      named([
        { param_name: 'first_name', example: 'Priya' },
        { param_name: 'company', example: 'Parcel Co' },
      ]),
    ).toEqual([]);
    expect(named([{ param_name: 'first_name', example: 'Priya' }])).toEqual([
      { field: 'components.0.example.body_text_named_params', message: expect.stringContaining('company') },
    ]);
  });

  it('names every other problem: component types, duplicates, media header samples, footer and button rules', () => {
    const errors = checkTemplateComponents(
      [
        { type: 'TITLE' },
        { type: 'HEADER', format: 'IMAGE' },
        body('Hi'),
        { type: 'BODY', text: 'again' },
        { type: 'FOOTER', text: 'Reply {{1}}' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'URL', text: 'Track', url: 'https://t.example.com/{{1}}' },
            { type: 'PHONE_NUMBER', text: 'Call' },
            { type: 'QUICK_REPLY', text: 'x'.repeat(26) },
          ],
        },
      ],
      'UTILITY',
      'POSITIONAL',
    );
    expect(fields(errors)).toEqual([
      'components.0.type',
      'components.1.example.header_handle',
      'components.3.type',
      'components.4.text',
      'components.5.buttons.0.example',
      'components.5.buttons.1.phone_number',
      'components.5.buttons.2.text',
    ]);
  });
});
