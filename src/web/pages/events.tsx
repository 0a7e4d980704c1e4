import { Fragment, useEffect, useState } from 'react';
import { api, type EventFeed, type Page, type WebhookEvent } from '../api';
import {
  DateTime,
  ErrorMessage,
  formatTime,
  PageTitle,
  Pagination,
  SelectField,
  StatusBadge,
  TableRegion,
} from '../components';
import { useLoad } from '../hooks';
import { setQuery, useLocation } from '../router';
import { useAccount } from './account-layout';

/** Long poll: the server answers as soon as an event is stored, or after this many seconds with nothing. */
const WAIT_SECONDS = 25;
const RETRY_MS = 3000;
const MAX_LIVE = 200;
const KIND_LABEL: Record<string, string> = {
  status_update: 'Status update',
  inbound_message: 'Inbound message',
  template_status: 'Template status',
  account_update: 'Account update',
  call: 'Call',
  handover: 'Conversation handover',
  agent_message: 'Meta Business Agent message',
};
const KIND_OPTIONS = [
  { value: '', label: 'Any kind' },
  ...Object.entries(KIND_LABEL).map(([value, label]) => ({ value, label })),
];
const STATUS_OPTIONS = ['', 'sent', 'delivered', 'read', 'failed'].map((s) => ({ value: s, label: s || 'Any status' }));

/**
 * The business account's webhook events, newest first. On the first page, new events are prepended live by
 * following the feed (`after=now`, then each `nextCursor`, `wait=25`): no page is re-read.
 */
export function EventsPage({ wabaId }: { wabaId: string }) {
  const { account } = useAccount();
  const { path, search } = useLocation();
  const filters = {
    kind: search.get('kind') ?? '',
    status: search.get('status') ?? '',
    messageId: search.get('messageId') ?? '',
  };
  const page = Number(search.get('page')) || 1;
  const [autoRefresh, setAutoRefresh] = useState(true);
  const [expanded, setExpanded] = useState<Set<number>>(new Set());
  const [fresh, setFresh] = useState<WebhookEvent[]>([]);
  const events = useLoad(
    () => api.get<Page<WebhookEvent>>('/webhooks/events', { wabaId, ...filters, page, limit: 25 }),
    [wabaId, search.toString()],
  );
  const live = autoRefresh && page === 1;
  const reload = events.reload;

  useEffect(() => {
    setFresh([]);
    if (!live) return;
    let stopped = false;
    const follow = async () => {
      let cursor = 'now';
      while (!stopped) {
        try {
          const feed = await api.get<EventFeed>('/webhooks/events', {
            wabaId,
            ...filters,
            after: cursor,
            wait: cursor === 'now' ? 0 : WAIT_SECONDS,
            limit: 100,
          });
          if (stopped) return;
          // The first page may have been read before the feed's starting point: read it once more.
          if (cursor === 'now') reload();
          cursor = feed.nextCursor;
          if (feed.items.length > 0) setFresh((prev) => [...[...feed.items].reverse(), ...prev].slice(0, MAX_LIVE));
        } catch {
          await new Promise((r) => setTimeout(r, RETRY_MS));
        }
      }
    };
    void follow();
    return () => {
      stopped = true;
    };
  }, [wabaId, search.toString(), live]);

  const shown = events.data
    ? [...fresh.filter((e) => !events.data!.items.some((p) => p.id === e.id)), ...events.data.items]
    : [];

  const filter = (key: 'kind' | 'status') => (e: { target: { value: string } }) =>
    setQuery(path, { ...filters, [key]: e.target.value }, { replace: true });
  const toggle = (id: number) => {
    const next = new Set(expanded);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setExpanded(next);
  };

  return (
    <>
      <PageTitle title={`${account.name}: events`}>Webhook events</PageTitle>
      <div className="filters">
        <SelectField label="Kind" name="kind" value={filters.kind} onChange={filter('kind')} options={KIND_OPTIONS} />
        <SelectField
          label="Status"
          name="status"
          value={filters.status}
          onChange={filter('status')}
          options={STATUS_OPTIONS}
        />
        <div className="field field-check">
          <input
            id="auto-refresh"
            type="checkbox"
            checked={autoRefresh}
            onChange={(e) => setAutoRefresh(e.target.checked)}
          />
          <label htmlFor="auto-refresh">Live (new events appear at the top of the first page)</label>
        </div>
        <div className="form-actions">
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setFresh([]);
              events.reload();
            }}
          >
            Refresh now
          </button>
        </div>
      </div>
      {filters.messageId && (
        <p className="chip">
          Only events of message <span className="mono wrap">{filters.messageId}</span>{' '}
          <button
            type="button"
            className="link-button"
            onClick={() => setQuery(path, { kind: filters.kind, status: filters.status })}
          >
            Show all events
          </button>
        </p>
      )}
      <p className="muted updated">{events.updatedAt ? `Updated at ${formatTime(events.updatedAt)}` : 'Loading…'}</p>
      <ErrorMessage error={events.error} />
      {events.data &&
        shown.length === 0 &&
        (filters.kind || filters.status || filters.messageId ? (
          <p className="empty-state">
            No events match these filters yet. They appear here as the platform reports them; clear the filters to see
            every event.
          </p>
        ) : (
          <p className="empty-state">
            No events yet. WhatsApp reports on every message sent (sent, delivered, read, failed) and on every customer
            message: send one with a key pair of this account and its events appear here within seconds.
          </p>
        ))}
      {events.data && shown.length > 0 && (
        <>
          <TableRegion label="Webhook events">
            <table className="events-table">
              <caption className="visually-hidden">Webhook events, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Recipient</th>
                  <th scope="col">Processed</th>
                  <th scope="col">Payload</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((e) => (
                  <Fragment key={e.id}>
                    <tr>
                      <td>
                        <DateTime iso={e.createdAt} />
                      </td>
                      <td>{KIND_LABEL[e.kind] ?? e.kind}</td>
                      <td>
                        {e.title}
                        {e.error && (
                          <span className="error-text">
                            {' '}
                            ({[e.error.code, e.error.title].filter((x) => x !== null).join(' ')})
                          </span>
                        )}
                        {e.media && (
                          <>
                            {' '}
                            <a
                              href={e.media.downloadPath}
                              download={e.media.filename ?? undefined}
                              aria-label={`Download the ${e.media.mimeType ?? 'media'} of event ${e.id}`}
                            >
                              Download {e.media.filename ?? e.media.mimeType ?? 'media'}
                            </a>
                          </>
                        )}
                      </td>
                      <td>
                        <StatusBadge status={e.status} />
                      </td>
                      <td className="mono">
                        {e.recipient ??
                          (e.userId ? (
                            <span title="Business-scoped user id (no phone number sent)">{e.userId}</span>
                          ) : (
                            '—'
                          ))}
                      </td>
                      <td>{e.processed ? 'yes' : 'pending'}</td>
                      <td>
                        <button
                          type="button"
                          className="secondary small"
                          aria-expanded={expanded.has(e.id)}
                          aria-controls={`raw-${e.id}`}
                          onClick={() => toggle(e.id)}
                        >
                          {expanded.has(e.id) ? 'Hide raw' : 'Show raw'}
                          <span className="visually-hidden"> payload of event {e.id}</span>
                        </button>
                      </td>
                    </tr>
                    {expanded.has(e.id) && (
                      <tr className="raw-row">
                        <td colSpan={7} id={`raw-${e.id}`}>
                          <pre className="raw" tabIndex={0} aria-label={`Raw payload of event ${e.id}`}>
                            {JSON.stringify(e.raw, null, 2)}
                          </pre>
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </TableRegion>
          <Pagination
            label="Events"
            page={events.data.page}
            totalPages={events.data.totalPages}
            total={events.data.total}
            onPage={(p) => setQuery(path, { ...filters, page: p })}
          />
        </>
      )}
    </>
  );
}
