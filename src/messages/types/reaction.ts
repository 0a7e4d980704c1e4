import { EMOJI, ReactionContentDto } from '../dto/message-content.dto.js';
import { contentField, defineMessageType, given, invalidParameter, invalidValue, isObject } from './message-type.js';

/** A reaction (one emoji, or '' to remove it) to a message of the conversation (24 h window). */
export const reaction = defineMessageType<'reaction', { reaction?: ReactionContentDto }>({
  type: 'reaction',
  fields: { reaction: contentField('reaction', ReactionContentDto) },
  examples: {
    reaction: { summary: 'Reaction (empty emoji removes it)', value: { type: 'reaction', reaction: { message_id: 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=', emoji: '👍' } } },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'reaction', content: given(request.reaction, 'reaction') }),
  stored: (request) => ({ reaction: request.reaction }),
  meta: (value) => {
    if (!isObject(value) || typeof value.message_id !== 'string' || value.message_id === '') return invalidParameter("The parameter reaction['message_id'] is required.");
    if (typeof value.emoji !== 'string' || !EMOJI.test(value.emoji)) return invalidValue("reaction['emoji'] must be a single emoji.");
    return undefined;
  },
});
