import { LocationContentDto } from '../dto/message-content.dto.js';
import { contentField, defineMessageType, given, invalidParameter, invalidValue, isObject } from './message-type.js';

/** A location pin: latitude, longitude, optional name and address (24 h window). */
export const location = defineMessageType<'location', { location?: LocationContentDto }>({
  type: 'location',
  fields: { location: contentField('location', LocationContentDto) },
  examples: {
    location: { summary: 'Location', value: { type: 'location', location: { latitude: 51.5072, longitude: -0.1276, name: 'Depot', address: '1 Example Street, London' } } },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'location', content: given(request.location, 'location') }),
  stored: (request) => ({ location: request.location }),
  meta: (value) => {
    if (!isObject(value)) return invalidParameter('Param location must be an object.');
    const { latitude: lat, longitude: lon } = value;
    if (typeof lat !== 'number' || lat < -90 || lat > 90) return invalidValue("location['latitude'] must be between -90 and 90.");
    if (typeof lon !== 'number' || lon < -180 || lon > 180) return invalidValue("location['longitude'] must be between -180 and 180.");
    return undefined;
  },
});
