import type { UpstreamTemplateComponent } from '../../upstream/upstream.types.js';

/**
 * How many parameters each component of a template expects, read from its upstream definition, so a send
 * can be checked before it reaches the upstream platform (which would answer 132000).
 */
export interface ParameterCounts {
  header: number;
  body: number;
  /** Button index (as the send's `index`) → parameters expected. */
  buttons: Record<string, number>;
  /** For NAMED templates, the placeholder names each component expects. */
  names: { header: string[]; body: string[] };
  /** IMAGE, VIDEO, DOCUMENT or LOCATION: the header's one parameter must be of that type (absent for text headers). */
  headerFormat?: string;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

function placeholders(text: string | undefined): string[] {
  if (!text) return [];
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

export function countParameters(components: UpstreamTemplateComponent[] | undefined): ParameterCounts {
  const counts: ParameterCounts = { header: 0, body: 0, buttons: {}, names: { header: [], body: [] } };
  for (const component of components ?? []) {
    switch ((component.type ?? '').toUpperCase()) {
      case 'HEADER': {
        const format = (component.format ?? 'TEXT').toUpperCase();
        if (format === 'TEXT') {
          counts.names.header = placeholders(component.text);
          counts.header = counts.names.header.length;
        } else if (['IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'].includes(format)) {
          counts.header = 1; // the media (or location) itself is the parameter
          counts.headerFormat = format;
        }
        break;
      }
      case 'BODY':
        counts.names.body = placeholders(component.text);
        counts.body = counts.names.body.length;
        break;
      case 'BUTTONS':
        (component.buttons ?? []).forEach((button, index) => {
          const type = (button.type ?? '').toUpperCase();
          if (type === 'URL' && placeholders(button.url).length > 0) counts.buttons[String(index)] = 1;
          else if (type === 'COPY_CODE' || type === 'OTP') counts.buttons[String(index)] = 1;
        });
        break;
      default:
        break;
    }
  }
  return counts;
}
