import { InteractiveContentDto } from './message-content.dto.js';
import { contentField, defineMessageType, given } from './message-type.js';

/**
 * Reply buttons (≤ 3), a list (≤ 10 rows), a call-to-action URL, a WhatsApp Flow (answered by an inbound `nfm_reply`)
 * or a location request (answered by an inbound `location`), with a body and optional header and footer (24 h window).
 */
export const interactive = defineMessageType<'interactive', { interactive?: InteractiveContentDto }>({
  type: 'interactive',
  fields: {
    interactive: contentField(
      'interactive',
      InteractiveContentDto,
      'button, list, cta_url, flow or location_request_message',
    ),
  },
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
    interactive_flow: {
      summary: 'WhatsApp Flow (the answer arrives as an inbound interactive nfm_reply)',
      value: {
        type: 'interactive',
        interactive: {
          type: 'flow',
          header: { type: 'text', text: 'Delivery slot' },
          body: { text: 'Pick the slot that suits you for order ORD-7781.' },
          footer: { text: 'Parcel Co' },
          action: {
            name: 'flow',
            parameters: {
              flow_message_version: '3',
              flow_token: 'ORD-7781',
              flow_id: '1188000000000001',
              flow_cta: 'Choose a slot',
              flow_action: 'navigate',
              flow_action_payload: { screen: 'DELIVERY_SLOT', data: { order_id: 'ORD-7781' } },
            },
          },
        },
      },
    },
    interactive_location_request: {
      summary: 'Location request (the answer arrives as an inbound location)',
      value: {
        type: 'interactive',
        interactive: {
          type: 'location_request_message',
          body: { text: 'Where should we deliver? Share your location.' },
          action: { name: 'send_location' },
        },
      },
    },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'interactive', content: given(request.interactive, 'interactive') }),
  stored: (request) => ({ interactive: request.interactive }),
});
