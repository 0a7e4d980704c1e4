import { LocationContentDto } from './message-content.dto.js';
import { contentField, defineMessageType, given } from './message-type.js';

/** A location pin: latitude, longitude, optional name and address (24 h window). */
export const location = defineMessageType<'location', { location?: LocationContentDto }>({
  type: 'location',
  fields: { location: contentField('location', LocationContentDto) },
  examples: {
    location: {
      summary: 'Location',
      value: {
        type: 'location',
        location: { latitude: 51.5072, longitude: -0.1276, name: 'Depot', address: '1 Example Street, London' },
      },
    },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'location', content: given(request.location, 'location') }),
  stored: (request) => ({ location: request.location }),
});
