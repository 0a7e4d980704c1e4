import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, seg, type Template } from '../api';
import { ErrorMessage, Notice, SelectField, TextField } from '../components';
import { useAction } from '../hooks';

const CATEGORIES = ['UTILITY', 'MARKETING', 'AUTHENTICATION'];
const VARIABLE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The distinct variables of a text, in order of first appearance. */
const variablesOf = (text: string) => [...new Set([...text.matchAll(VARIABLE)].map((m) => m[1]!))];
/** The text with each variable replaced by its example (the variable itself while it has none). */
const filled = (text: string, examples: Record<string, string>) =>
  text.replace(VARIABLE, (whole, name: string) => examples[name]?.trim() || whole);

interface Draft {
  name: string;
  language: string;
  category: string;
  header: string;
  body: string;
  footer: string;
  examples: Record<string, string>;
}

const EMPTY: Draft = {
  name: '',
  language: 'en_GB',
  category: 'UTILITY',
  header: '',
  body: '',
  footer: '',
  examples: {},
};

type Component = { type?: string; format?: string; text?: string; example?: Record<string, unknown> };

/** A stored template's text components as a draft (media headers and buttons are kept out of this simple editor). */
function draftOf(t: Template): Draft {
  const components = (Array.isArray(t.components) ? t.components : []) as Component[];
  const text = (type: string) => components.find((c) => c.type === type && (c.format ?? 'TEXT') === 'TEXT')?.text ?? '';
  const body = components.find((c) => c.type === 'BODY');
  const samples = (body?.example?.body_text as string[][] | undefined)?.[0] ?? [];
  const header = components.find((c) => c.type === 'HEADER');
  const headerSample = (header?.example?.header_text as string[] | undefined)?.[0];
  const examples: Record<string, string> = {};
  variablesOf(text('BODY')).forEach((v, i) => (examples[v] = samples[i] ?? ''));
  const [headerVariable] = variablesOf(text('HEADER'));
  if (headerVariable && headerSample) examples[headerVariable] = examples[headerVariable] || headerSample;
  return {
    name: t.name,
    language: t.language,
    category: t.category ?? 'UTILITY',
    header: text('HEADER'),
    body: text('BODY'),
    footer: text('FOOTER'),
    examples,
  };
}

/** Meta's components for the draft: a text header, the body and a footer, each variable with its example. */
function componentsOf(d: Draft): object[] {
  const sample = (names: string[]) => names.map((n) => d.examples[n] ?? '');
  const headerVariables = variablesOf(d.header);
  const bodyVariables = variablesOf(d.body);
  return [
    ...(d.header.trim()
      ? [
          {
            type: 'HEADER',
            format: 'TEXT',
            text: d.header,
            ...(headerVariables.length ? { example: { header_text: sample(headerVariables) } } : {}),
          },
        ]
      : []),
    {
      type: 'BODY',
      text: d.body,
      ...(bodyVariables.length ? { example: { body_text: [sample(bodyVariables)] } } : {}),
    },
    ...(d.footer.trim() ? [{ type: 'FOOTER', text: d.footer }] : []),
  ];
}

/**
 * Create a template (or edit one: `editing`) and see it as the customer will: Meta reviews it (PENDING until the
 * review webhook), and only an APPROVED template can be sent. Positional variables ({{1}}, {{2}}), one example each.
 */
export function TemplateEditor({
  wabaId,
  editing,
  onDone,
}: {
  wabaId: string;
  editing: Template | undefined;
  onDone: (saved: Template | undefined) => void;
}) {
  const [draft, setDraft] = useState<Draft>(editing ? draftOf(editing) : EMPTY);
  const [saved, setSaved] = useState<Template>();
  const bodyId = useId();
  useEffect(() => setDraft(editing ? draftOf(editing) : EMPTY), [editing]);
  const base = `/business-accounts/${seg(wabaId)}/templates`;
  const save = useAction((d: Draft) =>
    editing
      ? api.patch<Template>(`${base}/${seg(editing.id)}`, { components: componentsOf(d), category: d.category })
      : api.post<Template>(base, {
          name: d.name,
          language: d.language,
          category: d.category,
          components: componentsOf(d),
        }),
  );
  const set = (change: Partial<Draft>) => setDraft((d) => ({ ...d, ...change }));
  const variables = [...new Set([...variablesOf(draft.header), ...variablesOf(draft.body)])];

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(undefined);
    const result = await save.run(draft);
    if (result) {
      setSaved(result);
      if (!editing) setDraft(EMPTY);
      onDone(result);
    }
  };
  const fieldError = (field: string) =>
    save.error?.errors.find((e) => e.field === field || e.field.startsWith(`${field}.`))?.message;

  return (
    <section aria-labelledby="template-editor-heading" className="card" data-testid="template-editor">
      <h2 id="template-editor-heading">{editing ? `Edit ${editing.name} (${editing.language})` : 'New template'}</h2>
      <p className="muted">
        Meta reviews every new or edited template; it is PENDING until Meta’s decision arrives, and only APPROVED
        templates can be sent. Variables are {'{{1}}'}, {'{{2}}'}, … in order, each with an example.
      </p>
      <div className="template-editor">
        <form onSubmit={(e) => void submit(e)}>
          {!editing && (
            <>
              <TextField
                label="Name"
                hint="Lowercase letters, digits and underscores"
                value={draft.name}
                onChange={(e) => set({ name: e.target.value })}
                error={save.error?.field('name')}
                required
              />
              <TextField
                label="Language"
                hint="e.g. en_GB, en_US, pt_BR"
                value={draft.language}
                onChange={(e) => set({ language: e.target.value })}
                error={save.error?.field('language')}
                required
              />
            </>
          )}
          <SelectField
            label="Category"
            value={draft.category}
            onChange={(e) => set({ category: e.target.value })}
            options={CATEGORIES.map((c) => ({ value: c, label: c }))}
            error={save.error?.field('category')}
          />
          <TextField
            label="Header (optional)"
            value={draft.header}
            onChange={(e) => set({ header: e.target.value })}
            maxLength={60}
          />
          <div className="field">
            <label htmlFor={bodyId}>Body</label>
            <textarea
              id={bodyId}
              rows={4}
              value={draft.body}
              maxLength={1024}
              onChange={(e) => set({ body: e.target.value })}
              aria-invalid={fieldError('components') ? true : undefined}
              required
            />
          </div>
          <TextField
            label="Footer (optional)"
            value={draft.footer}
            onChange={(e) => set({ footer: e.target.value })}
            maxLength={60}
          />
          {variables.map((v) => (
            <TextField
              key={v}
              label={`Example for {{${v}}}`}
              value={draft.examples[v] ?? ''}
              onChange={(e) => set({ examples: { ...draft.examples, [v]: e.target.value } })}
              required
            />
          ))}
          <ErrorMessage error={save.error} fields={['name', 'language', 'category']} />
          <div className="actions">
            <button type="submit" disabled={save.pending}>
              {save.pending ? 'Submitting…' : editing ? 'Submit the edit for review' : 'Submit for review'}
            </button>
            {editing && (
              <button type="button" className="secondary" onClick={() => onDone(undefined)}>
                Cancel
              </button>
            )}
          </div>
        </form>
        <figure className="template-preview" aria-label="Preview">
          <figcaption className="muted">Preview (with the examples)</figcaption>
          <div className="bubble">
            {draft.header.trim() && <p className="bubble-header">{filled(draft.header, draft.examples)}</p>}
            <p>{draft.body.trim() ? filled(draft.body, draft.examples) : <span className="muted">The body…</span>}</p>
            {draft.footer.trim() && <p className="muted bubble-footer">{draft.footer}</p>}
          </div>
        </figure>
      </div>
      {saved && (
        <Notice tone="success">
          {saved.name} ({saved.language}) was submitted: {saved.status}. Its status changes here when Meta decides.
        </Notice>
      )}
    </section>
  );
}
