import { type MetaError, metaErrors } from './meta-errors.js';

/**
 * Meta's check of each message type's content in a send (`body[type]`), in Meta's words: one entry per type the
 * simulator sends, but templates, which send-validation.ts checks against the templates it stores. Written here,
 * on Meta's side, and not taken from the API's message-type catalogue (src/messages/types/): the simulator stands
 * in for Meta, and checking the API's requests with the API's own code would test that code against itself.
 * test/contract/simulator-send-checks.spec.ts checks that these cover exactly the catalogue's types and that every
 * example of the catalogue passes them.
 */
export type ContentCheck = (value: unknown, known: (id: string) => boolean) => MetaError | undefined;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A text's body: required, at most 4096 characters. */
export const checkText: ContentCheck = (v) => {
  if (!isObject(v) || typeof v.body !== 'string' || v.body.length === 0)
    return metaErrors.invalidParameter("The parameter text['body'] is required.");
  if (v.body.length > 4096) return metaErrors.invalidParameter("Param text['body'] is too long.");
  return undefined;
};

const bad = (details: string) => metaErrors.invalidValue(details);
const str = (v: unknown, min: number, max: number) => typeof v === 'string' && v.length >= min && v.length <= max;
const HTTPS = /^https:\/\/[^\s/]+/;

function media(type: string, extra: string[]): ContentCheck {
  return (value, known) => {
    if (!isObject(value)) return metaErrors.invalidParameter(`Param ${type} must be an object.`);
    const unknown = Object.keys(value).find((k) => !['link', 'id', ...extra].includes(k));
    if (unknown) return metaErrors.invalidParameter(`Param ${type}['${unknown}'] is not a valid parameter.`);
    if ((value.link === undefined) === (value.id === undefined))
      return metaErrors.invalidParameter(`Param ${type} must have exactly one of link or id.`);
    if (value.link !== undefined && (typeof value.link !== 'string' || !HTTPS.test(value.link)))
      return bad(`${type}['link'] must be an https URL.`);
    if (value.id !== undefined && (typeof value.id !== 'string' || !known(value.id)))
      return bad(`${type}['id'] (${JSON.stringify(value.id)}) is not a valid media id.`);
    if (value.caption !== undefined && !str(value.caption, 1, 1024))
      return bad(`${type}['caption'] must be 1 to 1024 characters.`);
    if (value.filename !== undefined && !str(value.filename, 1, 240))
      return bad(`${type}['filename'] must be 1 to 240 characters.`);
    return undefined;
  };
}

function checkInteractive(value: unknown): MetaError | undefined {
  if (!isObject(value)) return metaErrors.invalidParameter('Param interactive must be an object.');
  if (!isObject(value.body) || !str(value.body.text, 1, 1024))
    return bad("interactive['body']['text'] must be 1 to 1024 characters.");
  if (value.footer !== undefined && (!isObject(value.footer) || !str(value.footer.text, 1, 60)))
    return bad("interactive['footer']['text'] must be 1 to 60 characters.");
  const action = value.action;
  if (!isObject(action)) return metaErrors.invalidParameter("The parameter interactive['action'] is required.");
  switch (value.type) {
    case 'button': {
      const buttons = action.buttons;
      if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3)
        return bad("interactive['action']['buttons'] must have 1 to 3 buttons.");
      const ids = new Set<unknown>();
      for (const [i, b] of buttons.entries()) {
        if (!isObject(b) || b.type !== 'reply' || !isObject(b.reply))
          return metaErrors.invalidParameter(`buttons[${i}] must be a reply button.`);
        if (!str(b.reply.title, 1, 20)) return bad(`buttons[${i}]['reply']['title'] must be 1 to 20 characters.`);
        if (!str(b.reply.id, 1, 256) || ids.has(b.reply.id))
          return bad(`buttons[${i}]['reply']['id'] must be unique, 1 to 256 characters.`);
        ids.add(b.reply.id);
      }
      return undefined;
    }
    case 'list': {
      if (!str(action.button, 1, 20)) return bad("interactive['action']['button'] must be 1 to 20 characters.");
      const sections = action.sections;
      if (!Array.isArray(sections) || sections.length < 1 || sections.length > 10)
        return bad("interactive['action']['sections'] must have 1 to 10 sections.");
      const rows = sections.flatMap((s): unknown[] =>
        isObject(s) && Array.isArray(s.rows) ? (s.rows as unknown[]) : [],
      );
      if (rows.length < 1 || rows.length > 10) return bad('Total row count exceeded: a list has 1 to 10 rows.');
      const ids = new Set<unknown>();
      for (const r of rows) {
        if (!isObject(r) || !str(r.title, 1, 24)) return bad('Row title must be 1 to 24 characters.');
        if (!str(r.id, 1, 200) || ids.has(r.id)) return bad('Row ids must be unique, 1 to 200 characters.');
        if (r.description !== undefined && !str(r.description, 1, 72))
          return bad('Row description must be 1 to 72 characters.');
        ids.add(r.id);
      }
      return undefined;
    }
    case 'cta_url': {
      const p = action.parameters;
      if (action.name !== 'cta_url' || !isObject(p))
        return metaErrors.invalidParameter("interactive['action'] must have name cta_url and parameters.");
      if (!str(p.display_text, 1, 20)) return bad("parameters['display_text'] must be 1 to 20 characters.");
      if (typeof p.url !== 'string' || !HTTPS.test(p.url)) return bad("parameters['url'] must be an https URL.");
      return undefined;
    }
    case 'flow':
      return checkFlow(action);
    case 'location_request_message':
      if (action.name !== 'send_location')
        return metaErrors.invalidParameter("interactive['action']['name'] must be send_location.");
      if (value.header !== undefined || value.footer !== undefined)
        return metaErrors.invalidParameter('A location request message has a body only (no header or footer).');
      return undefined;
    default:
      return metaErrors.invalidParameter(
        "interactive['type'] must be one of {button, list, cta_url, flow, location_request_message, product, product_list}.",
      );
  }
}

/** Meta's flow message parameters (flow_message_version 3): one of flow_id or flow_name, a CTA of at most 30 characters. */
function checkFlow(action: Record<string, unknown>): MetaError | undefined {
  const p = action.parameters;
  if (action.name !== 'flow' || !isObject(p))
    return metaErrors.invalidParameter("interactive['action'] must have name flow and parameters.");
  if (p.flow_message_version !== '3') return bad("parameters['flow_message_version'] must be 3.");
  if ((p.flow_id === undefined) === (p.flow_name === undefined))
    return metaErrors.invalidParameter("Exactly one of parameters['flow_id'] or parameters['flow_name'] is required.");
  if (p.flow_id !== undefined && (typeof p.flow_id !== 'string' || !/^\d+$/.test(p.flow_id)))
    return bad("parameters['flow_id'] is not a valid flow id.");
  if (p.flow_name !== undefined && !str(p.flow_name, 1, 200)) return bad("parameters['flow_name'] is not valid.");
  if (!str(p.flow_cta, 1, 30)) return bad("parameters['flow_cta'] must be 1 to 30 characters.");
  if (p.flow_token !== undefined && !str(p.flow_token, 1, 256)) return bad("parameters['flow_token'] is not valid.");
  const flowAction = p.flow_action ?? 'navigate';
  if (flowAction !== 'navigate' && flowAction !== 'data_exchange')
    return bad("parameters['flow_action'] must be navigate or data_exchange.");
  const payload = p.flow_action_payload;
  if (payload !== undefined && (!isObject(payload) || !str(payload.screen, 1, 256)))
    return bad("parameters['flow_action_payload']['screen'] is required.");
  return undefined;
}

const EMOJI =
  /^(?:\p{Regional_Indicator}{2}|[#*0-9]\uFE0F?\u20E3|\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})*(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})*)*)?$/u;

/** The content checks by type (send-validation.ts checks `text` before the reply context, the others after it). */
export const CONTENT_CHECKS: Readonly<Record<string, ContentCheck>> = {
  text: checkText,
  image: media('image', ['caption']),
  video: media('video', ['caption']),
  audio: media('audio', []),
  document: media('document', ['caption', 'filename']),
  sticker: media('sticker', []),
  location: (v) => {
    if (!isObject(v)) return metaErrors.invalidParameter('Param location must be an object.');
    const { latitude: lat, longitude: lon } = v;
    if (typeof lat !== 'number' || lat < -90 || lat > 90)
      return bad("location['latitude'] must be between -90 and 90.");
    if (typeof lon !== 'number' || lon < -180 || lon > 180)
      return bad("location['longitude'] must be between -180 and 180.");
    return undefined;
  },
  contacts: (v) => {
    if (!Array.isArray(v) || v.length === 0)
      return metaErrors.invalidParameter('Param contacts must be a non-empty array.');
    const i = v.findIndex((c) => !isObject(c) || !isObject(c.name) || !str(c.name.formatted_name, 1, 512));
    return i >= 0
      ? metaErrors.invalidParameter(`The parameter contacts[${i}]['name']['formatted_name'] is required.`)
      : undefined;
  },
  interactive: checkInteractive,
  reaction: (v) => {
    if (!isObject(v) || typeof v.message_id !== 'string' || v.message_id === '')
      return metaErrors.invalidParameter("The parameter reaction['message_id'] is required.");
    if (typeof v.emoji !== 'string' || !EMOJI.test(v.emoji)) return bad("reaction['emoji'] must be a single emoji.");
    return undefined;
  },
};
