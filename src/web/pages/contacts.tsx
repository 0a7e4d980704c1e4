import { useState, type FormEvent } from 'react';
import { api, seg, type ContactErasure, type ContactExport } from '../api';
import { ErrorMessage, Notice, TextField } from '../components';
import { useAction } from '../hooks';

const CONTACT = /^[1-9]\d{7,14}$|^[A-Z]{2}\.[A-Za-z0-9]+$/;

/** Saves a JSON document as a file the operator hands to the contact. */
function download(name: string, doc: unknown) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

/**
 * One contact of the account (a phone number or business-scoped user id): a copy of everything stored about them
 * (every page of the export, as one file), and erasure behind a confirmation (docs/security.md, "A contact's data").
 */
export function ContactsPage({ wabaId }: { wabaId: string }) {
  const [input, setInput] = useState('');
  const [contact, setContact] = useState<string>();
  const [summary, setSummary] = useState<ContactExport>();
  const [erased, setErased] = useState<ContactErasure>();
  const [confirming, setConfirming] = useState(false);
  const path = (who: string) => `/business-accounts/${seg(wabaId)}/contacts/${seg(who)}`;

  const look = useAction(async (who: string) => {
    const doc = await api.get<ContactExport>(`${path(who)}/export`, { limit: 1000 });
    setContact(who);
    setSummary(doc);
    setErased(undefined);
    setConfirming(false);
  });
  const exportAll = useAction(async (who: string) => {
    const pages: ContactExport[] = [];
    let after = 0;
    for (;;) {
      const page = await api.get<ContactExport>(`${path(who)}/export`, { after, limit: 1000 });
      pages.push(page);
      if (page.nextAfter === null) break;
      after = page.nextAfter;
    }
    const [first] = pages;
    download(`contact-${who}.json`, { ...first, messages: pages.flatMap((p) => p.messages), nextAfter: null });
  });
  const erase = useAction(async (who: string) => {
    const counts = await api.delete<ContactErasure>(path(who));
    setErased(counts);
    setSummary(undefined);
    setConfirming(false);
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const who = input.trim();
    if (CONTACT.test(who)) void look.run(who);
  };
  const invalid = input.trim() !== '' && !CONTACT.test(input.trim());

  return (
    <section aria-labelledby="contacts-heading" className="card" data-testid="contacts">
      <h2 id="contacts-heading">Contacts</h2>
      <p className="muted">
        Find one contact by phone number (digits, no plus sign) or business-scoped user id, to export everything stored
        about them or to erase it. Owners and admins only; both are audit-logged.
      </p>
      <form onSubmit={submit} className="inline-form">
        <TextField
          label="Phone number or user id"
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder="447700900456"
          error={invalid ? 'A phone number (E.164 digits) or a business-scoped user id (CC.<id>)' : undefined}
        />
        <button type="submit" disabled={look.pending || invalid || input.trim() === ''}>
          Search
        </button>
      </form>
      <ErrorMessage error={look.error ?? exportAll.error ?? erase.error} />
      {erased && contact && (
        <Notice>
          Erased {contact}: {erased.messages} messages, {erased.events} events,{' '}
          {erased.webhookBodiesDeleted + erased.webhookBodiesRewritten} webhook bodies, {erased.campaignRecipients}{' '}
          campaign recipients, {erased.marketingPreferences} preferences, {erased.blockedUsers} blocks.
        </Notice>
      )}
      {summary && contact && (
        <div data-testid="contact-summary">
          <h3>{contact}</h3>
          <dl className="facts">
            <div>
              <dt>Messages</dt>
              <dd>
                {summary.messages.length}
                {summary.nextAfter !== null ? '+' : ''}
              </dd>
            </div>
            <div>
              <dt>Events</dt>
              <dd>{summary.events.length}</dd>
            </div>
            <div>
              <dt>Campaigns</dt>
              <dd>{summary.campaigns.length}</dd>
            </div>
            <div>
              <dt>Preferences, blocks</dt>
              <dd>
                {summary.marketingPreferences.length}, {summary.blocks.length}
              </dd>
            </div>
          </dl>
          <p>
            <button type="button" onClick={() => void exportAll.run(contact)} disabled={exportAll.pending}>
              {exportAll.pending ? 'Exporting…' : 'Export (JSON)'}
            </button>{' '}
            {confirming ? (
              <span className="confirm" role="group" aria-label={`Erase ${contact}?`}>
                Erase everything stored about {contact} on this account? This cannot be undone.{' '}
                <button
                  type="button"
                  className="danger"
                  onClick={() => void erase.run(contact)}
                  disabled={erase.pending}
                >
                  {erase.pending ? 'Erasing…' : 'Erase'}
                </button>{' '}
                <button type="button" className="secondary" onClick={() => setConfirming(false)} autoFocus>
                  Cancel
                </button>
              </span>
            ) : (
              <button type="button" className="danger" onClick={() => setConfirming(true)}>
                Erase contact…
              </button>
            )}
          </p>
        </div>
      )}
    </section>
  );
}
