import type { ContentSend } from '../../upstream/upstream.types.js';
import { audio } from './audio.js';
import { contacts } from './contacts.js';
import { document } from './document.js';
import { image } from './image.js';
import { interactive } from './interactive.js';
import { location } from './location.js';
import { reaction } from './reaction.js';
import { sticker } from './sticker.js';
import { template } from './template.js';
import { text } from './text.js';
import { video } from './video.js';

/**
 * Every message type POST /messages sends, one file each, in the order the API lists them (its `type` enum, the
 * Swagger schemas and examples, the validation of the send body). Adding a type: its file (and its tests), and
 * its line here.
 */
export const MESSAGE_TYPE_CATALOGUE = [
  template,
  text,
  image,
  video,
  audio,
  document,
  sticker,
  location,
  contacts,
  interactive,
  reaction,
] as const;

type Definition = (typeof MESSAGE_TYPE_CATALOGUE)[number];
export type MessageType = Definition['type'];
/** The types whose content goes upstream as an object (or array) in Meta's shape under the key named after the type. */
export type ContentType = Exclude<MessageType, 'template' | 'text'>;

/** Holds only for `true`: a type the compiler must find true. */
type Holds<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The upstream client's content types (upstream.types.ts, a layer below) are exactly the catalogue's. */
export type UpstreamNamesEveryContentType = Holds<Same<ContentType, ContentSend['type']>>;

export const MESSAGE_TYPES: readonly MessageType[] = MESSAGE_TYPE_CATALOGUE.map((d) => d.type);

type RequestOf<D> = D extends { stored(request: infer R): unknown } ? R : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** Every type's request fields (each optional: only the sent type's are required, by its validation). */
export type MessageTypeFields = Intersection<RequestOf<Definition>>;

const BY_TYPE = new Map<string, Definition>(MESSAGE_TYPE_CATALOGUE.map((d) => [d.type, d]));

/** The definition of a type the send body's validation accepted. */
export function messageType(type: MessageType): Definition {
  const definition = BY_TYPE.get(type);
  if (!definition) throw new Error(`unknown message type ${type}`);
  return definition;
}
