/**
 * Template components the specs send and create, typed once (Meta's wire format: lower-case `type` with
 * `parameters` when sending a template, upper-case `type` with `text` and `example` when creating one).
 */

/** A send's positional text parameters for one component (`body` unless said). */
export const textParameters = (texts: string[], type: 'body' | 'header' = 'body') => ({
  type,
  parameters: texts.map((text) => ({ type: 'text' as const, text })),
});

/** The simulator's parcel_update (en_GB): text header {{1}}, body {{1}} {{2}}, URL button 0 with {{1}}. */
export const parcelUpdateComponents = (order = 'ORD-7781', name = 'Priya') => [
  textParameters([order], 'header'),
  textParameters([name, order]),
  { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: order }] },
];

/** A BODY to create a template with, and the example values Meta requires for each of its placeholders. */
export const bodyDefinition = (text: string, examples: string[]) => ({
  type: 'BODY' as const,
  text,
  example: { body_text: [examples] },
});
