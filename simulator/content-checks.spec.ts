import { CONTENT_CHECKS } from './content-checks.js';

describe("the simulator's content checks (Meta's, in Meta's words)", () => {
  it.each([
    ['image', { link: 'http://cdn.example.com/p.jpg' }, 131009, "image['link'] must be an https URL."],
    [
      'image',
      { link: 'https://cdn.example.com/p.jpg', id: '123' },
      100,
      'Param image must have exactly one of link or id.',
    ],
    [
      'audio',
      { link: 'https://cdn.example.com/a.ogg', caption: 'no captions for audio' },
      100,
      "Param audio['caption'] is not a valid parameter.",
    ],
    ['document', { id: '999' }, 131009, `document['id'] ("999") is not a valid media id.`],
    ['location', { latitude: 91, longitude: 0 }, 131009, "location['latitude'] must be between -90 and 90."],
    ['contacts', [], 100, 'Param contacts must be a non-empty array.'],
    ['reaction', { message_id: 'wamid.X', emoji: 'ok' }, 131009, "reaction['emoji'] must be a single emoji."],
    [
      'interactive',
      { type: 'button', body: { text: 'Pick' }, action: { buttons: [] } },
      131009,
      "interactive['action']['buttons'] must have 1 to 3 buttons.",
    ],
    ['text', { body: 'x'.repeat(4097) }, 100, "Param text['body'] is too long."],
  ] as const)('refuses a malformed %s as Meta words it', (type, value, code, details) => {
    const refusal = CONTENT_CHECKS[type]?.(value, () => false);
    expect(refusal?.body.error).toMatchObject({ code, error_data: { details } });
  });
});
