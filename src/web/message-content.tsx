import type { ReactNode } from 'react';

/**
 * What a message carried, per type, as a reader would want it: the text, a media file's caption and name,
 * the buttons or list rows offered, the place. The stored content is Meta's object shape under the type's key.
 */
type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

const MEDIA = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/** One line for lists and tables. */
export function contentSummary(m: {
  type: string;
  templateName: string | null;
  templateLanguage: string | null;
  content?: unknown;
}): string {
  const content = obj(m.content);
  const body = obj(content[m.type]);
  switch (m.type) {
    case 'template':
      return `${m.templateName} (${m.templateLanguage})`;
    case 'text':
      return `text: ${clip(text(body.body) ?? '')}`;
    case 'location':
      return `location: ${text(body.name) ?? `${String(body.latitude)}, ${String(body.longitude)}`}`;
    case 'contacts':
      return `contacts: ${list(content.contacts)
        .map((c) => text(obj(c.name).formatted_name) ?? '?')
        .join(', ')}`;
    case 'interactive': {
      // A customer's reply to buttons or a list carries what was chosen.
      const reply = obj(body.button_reply ?? body.list_reply);
      if (text(reply.title)) return `reply: ${clip(text(reply.title)!)}`;
      return `interactive ${text(body.type) ?? ''}: ${clip(text(obj(body.body).text) ?? '')}`;
    }
    case 'button':
      return `button: ${clip(text(body.text) ?? text(body.payload) ?? '')}`;
    case 'reaction':
      return body.emoji === '' ? 'reaction removed' : `reaction ${text(body.emoji) ?? ''}`;
    default:
      if (MEDIA.has(m.type))
        return [m.type, text(body.filename), text(body.caption) && `“${clip(text(body.caption)!)}”`]
          .filter(Boolean)
          .join(': ');
      return m.type;
  }
}

function clip(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** The detail view: every part of the content that a person would read, per type. */
export function MessageContent({
  type,
  templateName,
  templateLanguage,
  content,
}: {
  type: string;
  templateName: string | null;
  templateLanguage: string | null;
  content: unknown;
}) {
  const c = obj(content);
  const body = obj(c[type]);
  const replyTo = text(obj(c.context).message_id);
  const rows: ReactNode[] = [];
  const add = (label: string, value: ReactNode) => {
    if (value !== undefined && value !== null && value !== '' && value !== false)
      rows.push(
        <Row key={label} label={label}>
          {value}
        </Row>,
      );
  };

  add('Type', type);
  if (type === 'template') add('Template', `${templateName} (${templateLanguage})`);
  else if (type === 'text') add('Text', <span className="wrap">{text(body.body)}</span>);
  else if (MEDIA.has(type)) {
    add(
      'File',
      text(body.link) ? (
        <a href={text(body.link)} rel="noreferrer noopener" target="_blank" className="wrap">
          {text(body.link)}
        </a>
      ) : (
        <span className="mono">media id {text(body.id)}</span>
      ),
    );
    add('File name', text(body.filename));
    add('Caption', text(body.caption));
  } else if (type === 'location') {
    add('Place', [text(body.name), text(body.address)].filter(Boolean).join(', '));
    add('Coordinates', `${String(body.latitude)}, ${String(body.longitude)}`);
  } else if (type === 'contacts') {
    add(
      'Contacts',
      <ul>
        {list(c.contacts).map((contact, i) => (
          <li key={i}>
            {text(obj(contact.name).formatted_name)}
            {list(contact.phones).length > 0 && (
              <span className="muted">
                {' '}
                {list(contact.phones)
                  .map((p) => text(p.phone))
                  .filter(Boolean)
                  .join(', ')}
              </span>
            )}
          </li>
        ))}
      </ul>,
    );
  } else if (type === 'interactive') {
    const action = obj(body.action);
    const header = obj(body.header);
    add('Kind', text(body.type) ?? '');
    add('Header', text(header.text) ?? (text(header.type) && `${String(header.type)} attachment`));
    add('Body', <span className="wrap">{text(obj(body.body).text)}</span>);
    add('Footer', text(obj(body.footer).text));
    if (body.type === 'button') {
      add(
        'Buttons',
        <ul>
          {list(action.buttons).map((b, i) => (
            <li key={i}>
              {text(obj(b.reply).title)} <span className="muted mono">({text(obj(b.reply).id)})</span>
            </li>
          ))}
        </ul>,
      );
    } else if (body.type === 'list') {
      add('List button', text(action.button));
      add(
        'Sections',
        <ul>
          {list(action.sections).map((s, i) => (
            <li key={i}>
              {text(s.title) ?? 'Untitled section'}
              <ul>
                {list(s.rows).map((r, j) => (
                  <li key={j}>
                    {text(r.title)} {text(r.description) && <span className="muted">— {text(r.description)}</span>}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>,
      );
    } else if (body.type === 'cta_url') {
      const p = obj(action.parameters);
      add(
        'Button',
        <>
          {text(p.display_text)} → <span className="wrap">{text(p.url)}</span>
        </>,
      );
    }
  } else if (type === 'reaction') {
    add('Reaction', body.emoji === '' ? 'removed' : (text(body.emoji) ?? ''));
    add('To message', <span className="mono wrap">{text(body.message_id)}</span>);
  }
  add('Reply to', replyTo && <span className="mono wrap">{replyTo}</span>);
  return <>{rows}</>;
}
