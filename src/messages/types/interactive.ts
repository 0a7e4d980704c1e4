import { InteractiveContentDto } from '../dto/message-content.dto.js';
import { contentField, defineMessageType, given, HTTPS_URL, invalidParameter, invalidValue, isObject, str, type MetaRefusal } from './message-type.js';

/** Reply buttons (≤ 3), a list (≤ 10 rows) or a call-to-action URL, with a body and optional header and footer (24 h window). */
export const interactive = defineMessageType<'interactive', { interactive?: InteractiveContentDto }>({
  type: 'interactive',
  fields: { interactive: contentField('interactive', InteractiveContentDto, 'button, list or cta_url') },
  examples: {
    interactive_button: {
      summary: 'Interactive reply buttons (≤ 3)',
      value: {
        type: 'interactive',
        interactive: { type: 'button', body: { text: 'Which slot suits you?' }, action: { buttons: [{ type: 'reply', reply: { id: 'am', title: 'Morning' } }, { type: 'reply', reply: { id: 'pm', title: 'Afternoon' } }] } },
      },
    },
    interactive_list: {
      summary: 'Interactive list (≤ 10 rows)',
      value: { type: 'interactive', interactive: { type: 'list', body: { text: 'Pick a slot' }, action: { button: 'Slots', sections: [{ title: 'Tomorrow', rows: [{ id: 'a', title: 'Morning', description: '8–12' }] }] } } },
    },
    interactive_cta_url: {
      summary: 'Interactive call-to-action URL',
      value: { type: 'interactive', interactive: { type: 'cta_url', body: { text: 'Track your parcel' }, action: { name: 'cta_url', parameters: { display_text: 'Track', url: 'https://parcel.example.com/t/ORD-7781' } } } },
    },
  },
  window: 'service_window',
  upstream: (request) => ({ type: 'interactive', content: given(request.interactive, 'interactive') }),
  stored: (request) => ({ interactive: request.interactive }),
  meta: checkInteractive,
});

function checkInteractive(value: unknown): MetaRefusal | undefined {
  if (!isObject(value)) return invalidParameter('Param interactive must be an object.');
  if (!isObject(value.body) || !str(value.body.text, 1, 1024)) return invalidValue("interactive['body']['text'] must be 1 to 1024 characters.");
  if (value.footer !== undefined && (!isObject(value.footer) || !str(value.footer.text, 1, 60))) return invalidValue("interactive['footer']['text'] must be 1 to 60 characters.");
  const action = value.action;
  if (!isObject(action)) return invalidParameter("The parameter interactive['action'] is required.");
  switch (value.type) {
    case 'button': {
      const buttons = action.buttons;
      if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) return invalidValue("interactive['action']['buttons'] must have 1 to 3 buttons.");
      const ids = new Set<unknown>();
      for (const [i, b] of buttons.entries()) {
        if (!isObject(b) || b.type !== 'reply' || !isObject(b.reply)) return invalidParameter(`buttons[${i}] must be a reply button.`);
        if (!str(b.reply.title, 1, 20)) return invalidValue(`buttons[${i}]['reply']['title'] must be 1 to 20 characters.`);
        if (!str(b.reply.id, 1, 256) || ids.has(b.reply.id)) return invalidValue(`buttons[${i}]['reply']['id'] must be unique, 1 to 256 characters.`);
        ids.add(b.reply.id);
      }
      return undefined;
    }
    case 'list': {
      if (!str(action.button, 1, 20)) return invalidValue("interactive['action']['button'] must be 1 to 20 characters.");
      const sections = action.sections;
      if (!Array.isArray(sections) || sections.length < 1 || sections.length > 10) return invalidValue("interactive['action']['sections'] must have 1 to 10 sections.");
      const rows: unknown[] = sections.flatMap((s) => (isObject(s) && Array.isArray(s.rows) ? (s.rows as unknown[]) : []));
      if (rows.length < 1 || rows.length > 10) return invalidValue('Total row count exceeded: a list has 1 to 10 rows.');
      const ids = new Set<unknown>();
      for (const r of rows) {
        if (!isObject(r) || !str(r.title, 1, 24)) return invalidValue('Row title must be 1 to 24 characters.');
        if (!str(r.id, 1, 200) || ids.has(r.id)) return invalidValue('Row ids must be unique, 1 to 200 characters.');
        if (r.description !== undefined && !str(r.description, 1, 72)) return invalidValue('Row description must be 1 to 72 characters.');
        ids.add(r.id);
      }
      return undefined;
    }
    case 'cta_url': {
      const p = action.parameters;
      if (action.name !== 'cta_url' || !isObject(p)) return invalidParameter("interactive['action'] must have name cta_url and parameters.");
      if (!str(p.display_text, 1, 20)) return invalidValue("parameters['display_text'] must be 1 to 20 characters.");
      if (typeof p.url !== 'string' || !HTTPS_URL.test(p.url)) return invalidValue("parameters['url'] must be an https URL.");
      return undefined;
    }
    default:
      return invalidParameter("interactive['type'] must be one of {button, list, cta_url, flow, product, product_list}.");
  }
}
