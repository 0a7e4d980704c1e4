import { InteractiveContentDto } from './message-content.dto.js';
import { contentField, defineMessageType, given } from './message-type.js';

/** Reply buttons (≤ 3), a list (≤ 10 rows) or a call-to-action URL, with a body and optional header and footer (24 h window). */
export const interactive = defineMessageType<'interactive', { interactive?: InteractiveContentDto }>({
  type: 'interactive',
  fields: { interactive: contentField('interactive', InteractiveContentDto, 'button, list or cta_url') },
  examples: {
    interactive_button: {
      summary: 'Interactive reply buttons (≤ 3)',
      value: {
        type: 'interactive',
        interactive: {
          type: 'button',
          body: { text: 'Which slot suits you?' },
          action: {
            buttons: [
              { type: 'reply', reply: { id: 'am', title: 'Morning' } },
              { type: 'reply', reply: { id: 'pm', title: 'Afternoon' } },
            ],
          },
        },
      },
    },
    interactive_list: {
      summary: 'Interactive list (≤ 10 rows)',
      value: {
        type: 'interactive',
        interactive: {
          type: 'list',
          body: { text: 'Pick a slot' },
          action: {
            button: 'Slots',
            sections: [{ title: 'Tomorrow', rows: [{ id: 'a', title: 'Morning', description: '8–12' }] }],
          },
        },
      },
    },
    interactive_cta_url: {
      summary: 'Interactive call-to-action URL',
      value: {
        type: 'interactive',
        interactive: {
          type: 'cta_url',
          body: { text: 'Track your parcel' },
          action: {
            name: 'cta_url',
            parameters: { display_text: 'Track', url: 'https://parcel.example.com/t/ORD-7781' },
          },
        },
      },
    },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'interactive', content: given(request.interactive, 'interactive') }),
  stored: (request) => ({ interactive: request.interactive }),
});
