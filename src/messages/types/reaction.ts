import { ReactionContentDto } from './message-content.dto.js';
import { contentField, defineMessageType, given } from './message-type.js';

/** A reaction (one emoji, or '' to remove it) to a message of the conversation (24 h window). */
export const reaction = defineMessageType<'reaction', { reaction?: ReactionContentDto }>({
  type: 'reaction',
  fields: { reaction: contentField('reaction', ReactionContentDto) },
  examples: {
    reaction: {
      summary: 'Reaction (empty emoji removes it)',
      value: { type: 'reaction', reaction: { message_id: 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhggM0E=', emoji: '👍' } },
    },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'reaction', content: given(request.reaction, 'reaction') }),
  stored: (request) => ({ reaction: request.reaction }),
});
