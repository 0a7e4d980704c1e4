import {
  defineMessageType,
  contentField,
  given,
  type MessageTypeDefinition,
  type UpstreamPart,
} from './message-type.js';

/** The five media types (image, video, audio, document, sticker): each one file, all sent and checked alike. */
export type MediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/**
 * A media type: `{link | id}` (exactly one) plus the extra fields Meta allows for it (its content DTO), under the
 * field named after the type, sent as given.
 */
export function mediaType<T extends MediaType, C extends object>(spec: {
  type: T;
  dto: new () => C;
  /** What Meta accepts, said in the field's description. */
  note: string;
  examples: MessageTypeDefinition<T, Partial<Record<T, C>>>['examples'];
}): MessageTypeDefinition<T, Partial<Record<T, C>>> {
  const { type } = spec;
  return defineMessageType<T, Partial<Record<T, C>>>({
    type,
    fields: { [type]: contentField(type, spec.dto, spec.note) } as MessageTypeDefinition<
      T,
      Partial<Record<T, C>>
    >['fields'],
    examples: spec.examples,
    window: 'service_window',
    // UpstreamPart<T> of a media type T is `{type: T, content}`; TypeScript does not resolve the conditional for a generic T.
    upstream: (request) => ({ type, content: given<object>(request[type], type) }) as unknown as UpstreamPart<T>,
    stored: (request) => ({ [type]: request[type] }),
  });
}
