import { defineMessageType, contentField, given, HTTPS_URL, invalidParameter, invalidValue, isObject, str, type MessageTypeDefinition, type UpstreamPart } from './message-type.js';

/** The five media types (image, video, audio, document, sticker): each one file, all sent and checked alike. */
export type MediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/**
 * A media type: `{link | id}` (exactly one) plus the extra fields Meta allows for it, under the field named after the
 * type, sent as given; Meta refuses unknown fields, both or neither of link and id, a link that is not https, an
 * unknown media id, and captions or file names over their lengths.
 */
export function mediaType<T extends MediaType, C extends object>(spec: {
  type: T;
  dto: new () => C;
  /** What Meta accepts, said in the field's description. */
  note: string;
  /** The fields besides link and id that Meta takes for this type. */
  extra: readonly ('caption' | 'filename')[];
  examples: MessageTypeDefinition<T, Partial<Record<T, C>>>['examples'];
}): MessageTypeDefinition<T, Partial<Record<T, C>>> {
  const { type } = spec;
  const allowed = ['link', 'id', ...spec.extra];
  return defineMessageType<T, Partial<Record<T, C>>>({
    type,
    fields: { [type]: contentField(type, spec.dto, spec.note) } as MessageTypeDefinition<T, Partial<Record<T, C>>>['fields'],
    examples: spec.examples,
    window: 'service_window',
    // UpstreamPart<T> of a media type T is `{type: T, content}`; TypeScript does not resolve the conditional for a generic T.
    upstream: (request) => ({ type, content: given<object>(request[type], type) }) as unknown as UpstreamPart<T>,
    stored: (request) => ({ [type]: request[type] }),
    meta: (value, known) => {
      if (!isObject(value)) return invalidParameter(`Param ${type} must be an object.`);
      const unknown = Object.keys(value).find((k) => !allowed.includes(k));
      if (unknown) return invalidParameter(`Param ${type}['${unknown}'] is not a valid parameter.`);
      if ((value.link === undefined) === (value.id === undefined)) return invalidParameter(`Param ${type} must have exactly one of link or id.`);
      if (value.link !== undefined && (typeof value.link !== 'string' || !HTTPS_URL.test(value.link))) return invalidValue(`${type}['link'] must be an https URL.`);
      if (value.id !== undefined && (typeof value.id !== 'string' || !known(value.id))) return invalidValue(`${type}['id'] (${String(value.id)}) is not a valid media id.`);
      if (value.caption !== undefined && !str(value.caption, 1, 1024)) return invalidValue(`${type}['caption'] must be 1 to 1024 characters.`);
      if (value.filename !== undefined && !str(value.filename, 1, 240)) return invalidValue(`${type}['filename'] must be 1 to 240 characters.`);
      return undefined;
    },
  });
}
