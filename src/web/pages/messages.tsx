import { useEffect, useState, type FormEvent } from 'react';
import { api, seg, type Message, type MessageDetail, type Page, type PhoneNumber } from '../api';
import type { operations } from '../api-types';
import { contentSummary, MessageContent } from '../message-content';
import {
  DateTime,
  ErrorMessage,
  PageTitle,
  Pagination,
  SelectField,
  StatusBadge,
  TableRegion,
  TextField,
} from '../components';
import { useLoad } from '../hooks';
import { Link, setQuery, useLocation } from '../router';
import { useAccount } from './account-layout';

const FILTERS = ['direction', 'status', 'type', 'to', 'phoneNumberId', 'templateName', 'from', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

const DIRECTION_OPTIONS = [
  { value: '', label: 'Sent and received' },
  { value: 'outbound', label: 'Sent (outbound)' },
  { value: 'inbound', label: 'Received (inbound)' },
];
const STATUS_OPTIONS = ['', 'pending', 'sent', 'delivered', 'read', 'failed', 'received'].map((s) => ({
  value: s,
  label: s || 'Any status',
}));
/** The API's message types: its `type` filter, generated from the message-type catalogue (src/messages/types/). */
type MessageType = NonNullable<NonNullable<operations['listAccountMessages']['parameters']['query']>['type']>;
// Each type once, no other: a type the catalogue gains fails this check (after `npm run openapi:types`) until listed.
const MESSAGE_TYPES = Object.keys({
  template: 0,
  text: 0,
  image: 0,
  video: 0,
  audio: 0,
  document: 0,
  sticker: 0,
  location: 0,
  contacts: 0,
  interactive: 0,
  reaction: 0,
} satisfies Record<MessageType, 0>);
const TYPE_OPTIONS = ['', ...MESSAGE_TYPES].map((s) => ({ value: s, label: s || 'Any type' }));

/** A local calendar day as the API's ISO instants: from its start, until the start of the next day. */
const dayStart = (day: string, plusDays = 0) => {
  if (!day) return undefined;
  const d = new Date(`${day}T00:00:00`);
  d.setDate(d.getDate() + plusDays);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
};

export function MessagesPage({ wabaId }: { wabaId: string }) {
  const { account } = useAccount();
  const { path, search } = useLocation();
  const applied = Object.fromEntries(FILTERS.map((f) => [f, search.get(f) ?? ''])) as Filters;
  const page = Number(search.get('page')) || 1;
  const [draft, setDraft] = useState<Filters>(applied);
  // Back and forward change the applied filters: the form follows.
  useEffect(() => setDraft(applied), [search.toString()]);
  const numbers = useLoad(
    () => api.get<Page<PhoneNumber>>(`/business-accounts/${seg(wabaId)}/phone-numbers`, { page: 1, limit: 100 }),
    [wabaId],
  );
  const messages = useLoad(
    () =>
      api.get<Page<Message>>(`/business-accounts/${seg(wabaId)}/messages`, {
        direction: applied.direction,
        status: applied.status,
        type: applied.type,
        to: applied.to.replace(/^\+/, ''),
        phoneNumberId: applied.phoneNumberId,
        templateName: applied.templateName,
        since: dayStart(applied.from),
        until: dayStart(applied.until, 1),
        page,
        limit: 20,
      }),
    [wabaId, search.toString()],
  );

  const set = (key: keyof Filters) => (e: { target: { value: string } }) =>
    setDraft({ ...draft, [key]: e.target.value });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setQuery(path, { ...draft });
  };
  const reset = () => {
    const empty = Object.fromEntries(FILTERS.map((f) => [f, ''])) as Filters;
    setDraft(empty);
    setQuery(path, {});
  };

  return (
    <>
      <PageTitle title={`${account.name}: messages`}>Messages</PageTitle>
      <form onSubmit={apply} className="filters" aria-label="Message filters">
        <SelectField
          label="Direction"
          name="direction"
          value={draft.direction}
          onChange={set('direction')}
          options={DIRECTION_OPTIONS}
        />
        <SelectField
          label="Status"
          name="status"
          value={draft.status}
          onChange={set('status')}
          options={STATUS_OPTIONS}
        />
        <SelectField label="Type" name="type" value={draft.type} onChange={set('type')} options={TYPE_OPTIONS} />
        <TextField
          label="Recipient"
          name="to"
          inputMode="tel"
          placeholder="447700900123"
          value={draft.to}
          onChange={set('to')}
          error={messages.error?.field('to')}
        />
        <SelectField
          label="From number"
          name="phoneNumberId"
          value={draft.phoneNumberId}
          onChange={set('phoneNumberId')}
          options={[
            { value: '', label: 'Any number' },
            ...(numbers.data?.items ?? []).map((n) => ({ value: n.phoneNumberId, label: n.displayPhoneNumber })),
          ]}
        />
        <TextField label="Template" name="templateName" value={draft.templateName} onChange={set('templateName')} />
        <TextField
          label="Created from"
          name="from"
          type="date"
          value={draft.from}
          onChange={set('from')}
          error={messages.error?.field('since')}
        />
        <TextField
          label="Created until"
          name="until"
          type="date"
          value={draft.until}
          onChange={set('until')}
          error={messages.error?.field('until')}
        />
        <div className="form-actions">
          <button type="submit">Apply filters</button>
          <button type="button" className="secondary" onClick={reset}>
            Reset
          </button>
          <button type="button" className="secondary" onClick={messages.reload}>
            Refresh
          </button>
        </div>
      </form>
      <ErrorMessage error={messages.error} fields={['to', 'since', 'until']} />
      {!messages.data && messages.loading && <p role="status">Loading…</p>}
      {messages.data &&
        messages.data.total === 0 &&
        (Object.values(applied).some((v) => v !== '') ? (
          <p className="empty-state">
            No messages match these filters. Widen them, or press Reset to see every message.
          </p>
        ) : (
          <p className="empty-state">
            No messages yet. Send one with a key pair of this account (<Link to="/keys">create one</Link>, then POST
            /messages as in the README's walk-through), or wait for a customer to write to one of its numbers: both
            directions are listed here.
          </p>
        ))}
      {messages.data && messages.data.total > 0 && (
        <>
          <TableRegion label="Messages">
            <table>
              <caption className="visually-hidden">Messages, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">ID</th>
                  <th scope="col">Created</th>
                  <th scope="col">Direction</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Content</th>
                  <th scope="col">Status</th>
                  <th scope="col">Failure reason</th>
                </tr>
              </thead>
              <tbody>
                {messages.data.items.map((m) => (
                  <tr key={m.id}>
                    <td>
                      <Link to={`/accounts/${seg(wabaId)}/messages/${m.id}`} aria-label={`Message ${m.id} details`}>
                        #{m.id}
                      </Link>
                    </td>
                    <td>
                      <DateTime iso={m.createdAt} />
                    </td>
                    <td>{m.direction === 'inbound' ? 'Received' : 'Sent'}</td>
                    <td className="mono">{customerOf(m)}</td>
                    <td>
                      {contentSummary(m)}
                      {m.media && <MediaPreview media={m.media} type={m.type} messageId={m.id} thumbnail />}
                    </td>
                    <td>
                      <StatusBadge status={m.status} />
                    </td>
                    <td>{m.error ? `${m.error.code ?? ''} ${m.error.title ?? ''}`.trim() : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
          <Pagination
            label="Messages"
            page={messages.data.page}
            totalPages={messages.data.totalPages}
            total={messages.data.total}
            onPage={(p) => setQuery(path, { ...applied, page: p })}
          />
        </>
      )}
    </>
  );
}

/** The customer of a message: its recipient (sent) or its sender (received; a username user by its user id). */
function customerOf(m: Pick<Message, 'direction' | 'to' | 'from' | 'userId'>): string {
  return (m.direction === 'inbound' ? (m.from ?? m.userId) : (m.to ?? m.userId)) ?? '—';
}

/**
 * An inbound media message's file through its signed link (the same link a key-pair backend gets): images and
 * stickers shown, everything else as a download link. Links expire in minutes: the page reloads them with the list.
 */
function MediaPreview({
  media,
  type,
  messageId,
  thumbnail = false,
}: {
  media: NonNullable<Message['media']>;
  type: string;
  messageId: number;
  thumbnail?: boolean;
}) {
  const label = `${type} of message ${messageId}${media.mimeType ? ` (${media.mimeType})` : ''}`;
  return (
    <div className={thumbnail ? 'media-thumb' : 'media-preview'}>
      {(type === 'image' || type === 'sticker') && (
        <img src={media.url} alt={media.caption ?? `The ${label}`} loading="lazy" />
      )}
      <a href={media.url} download={media.filename ?? true} aria-label={`Download the ${label}`}>
        {thumbnail ? 'Download' : `Download ${media.filename ?? type}`}
      </a>
    </div>
  );
}

const STATUS_LABEL: Record<string, string> = {
  accepted: 'Accepted by the platform',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  failed: 'Failed',
};

export function MessageDetailPage({ wabaId, id }: { wabaId: string; id: string }) {
  const { account } = useAccount();
  const message = useLoad(
    () => api.get<MessageDetail>(`/business-accounts/${seg(wabaId)}/messages/${seg(id)}`),
    [wabaId, id],
  );
  const m = message.data;

  return (
    <>
      <p>
        <Link to={`/accounts/${seg(wabaId)}/messages`}>← All messages</Link>
      </p>
      <PageTitle title={`${account.name}: message #${id}`}>Message #{id}</PageTitle>
      <ErrorMessage error={message.error} />
      {m && (
        <>
          <dl className="facts">
            <div>
              <dt>Status</dt>
              <dd>
                <StatusBadge status={m.status} />
              </dd>
            </div>
            <div>
              <dt>Direction</dt>
              <dd>{m.direction === 'inbound' ? 'Received from a customer' : 'Sent'}</dd>
            </div>
            {m.direction === 'outbound' && (
              <div>
                <dt>Sent through</dt>
                <dd>{m.upstreamApi === 'marketing_messages' ? 'Marketing Messages API' : 'Cloud API'}</dd>
              </div>
            )}
            {m.handledBy === 'meta_business_agent' && (
              <div>
                <dt>Handled by</dt>
                <dd>Meta Business Agent (a reply you send takes the conversation over)</dd>
              </div>
            )}
            <div>
              <dt>{m.direction === 'inbound' ? 'Sender' : 'Recipient'}</dt>
              <dd className="mono">{customerOf(m)}</dd>
            </div>
            <div>
              <dt>{m.direction === 'inbound' ? 'To number' : 'From number'}</dt>
              <dd className="mono">{m.phoneNumberId}</dd>
            </div>
            <MessageContent
              type={m.type}
              templateName={m.templateName}
              templateLanguage={m.templateLanguage}
              content={m.content}
            />
            <div>
              <dt>Created</dt>
              <dd>
                <DateTime iso={m.createdAt} />
              </dd>
            </div>
            <div>
              <dt>Upstream message ID</dt>
              <dd className="mono wrap">{m.upstreamMessageId ?? '—'}</dd>
            </div>
          </dl>

          {m.media && (
            <section aria-labelledby="media-heading">
              <h2 id="media-heading">Media</h2>
              <MediaPreview media={m.media} type={m.type} messageId={m.id} />
            </section>
          )}

          {m.error && (
            <section aria-labelledby="failure-heading" className="card card-error">
              <h2 id="failure-heading">Failure reason</h2>
              <p>
                <strong>
                  {m.error.code !== null && `${m.error.code} `}
                  {m.error.title}
                </strong>
                {m.error.category && <span className="muted"> (category: {m.error.category})</span>}
              </p>
              {m.error.detail && <p>{m.error.detail}</p>}
            </section>
          )}

          <section aria-labelledby="timeline-heading">
            <h2 id="timeline-heading">Status timeline</h2>
            {m.statusHistory.length === 0 ? (
              <p>
                {m.direction === 'inbound'
                  ? 'Received from the customer: inbound messages have no delivery statuses.'
                  : 'No status yet: the platform has not accepted this message.'}
              </p>
            ) : (
              <ol className="timeline">
                {m.statusHistory.map((h, i) => (
                  <li key={i} className={`timeline-${h.status}`}>
                    <span className="timeline-status">{STATUS_LABEL[h.status] ?? h.status}</span>
                    <span className="timeline-time">
                      <DateTime iso={h.timestamp} fallback="time unknown" />
                    </span>
                    <span className="muted timeline-source">
                      {h.source === 'send' ? (
                        'from the send response'
                      ) : (
                        <>
                          webhook received <DateTime iso={h.receivedAt} />
                        </>
                      )}
                    </span>
                  </li>
                ))}
              </ol>
            )}
            {m.upstreamMessageId && (
              <p>
                <Link to={`/accounts/${seg(wabaId)}/events?messageId=${encodeURIComponent(m.upstreamMessageId)}`}>
                  Webhook events of this message
                </Link>
              </p>
            )}
          </section>

          <details>
            <summary>{m.direction === 'inbound' ? 'What was received' : 'What was sent'}</summary>
            <pre className="raw">{JSON.stringify(m.content, null, 2)}</pre>
          </details>
        </>
      )}
    </>
  );
}
