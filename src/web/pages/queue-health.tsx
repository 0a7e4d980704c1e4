import { api, type AccountDeliveryHealth } from '../api';
import { DateTime, ErrorMessage, formatTime, PageTitle, TableRegion } from '../components';
import { useLoad } from '../hooks';
import { Link } from '../router';

const POLL_MS = 5000;

/**
 * The organization's own webhook backlog per business account (GET /webhooks/deliveries/health): what the
 * worker still has to process, what it gave up on, and how far behind it is. The shared queues themselves
 * are for platform administrators only.
 */
export function QueueHealthPage() {
  const health = useLoad(() => api.get<AccountDeliveryHealth[]>('/webhooks/deliveries/health'), [], {
    pollMs: POLL_MS,
  });
  return (
    <>
      <PageTitle title="Queue health">Queue health</PageTitle>
      <p className="muted updated">{health.updatedAt ? `Updated at ${formatTime(health.updatedAt)}` : 'Loading…'}</p>
      <ErrorMessage error={health.error} />
      {health.data && health.data.length === 0 && (
        <p>
          No business accounts yet. <Link to="/">Connect one</Link> to see its webhook backlog here.
        </p>
      )}
      {health.data && health.data.length > 0 && (
        <TableRegion label="Webhook backlog">
          <table>
            <caption className="visually-hidden">
              Webhook deliveries waiting and dead-lettered, per business account
            </caption>
            <thead>
              <tr>
                <th scope="col">Business account</th>
                <th scope="col">Waiting</th>
                <th scope="col">Oldest waiting since</th>
                <th scope="col">Lag</th>
                <th scope="col">Dead letters</th>
              </tr>
            </thead>
            <tbody>
              {health.data.map((h) => (
                <tr key={h.wabaId}>
                  <td className="mono">
                    <Link to={`/accounts/${encodeURIComponent(h.wabaId)}/events`}>{h.wabaId}</Link>
                  </td>
                  <td>{h.pending}</td>
                  <td>
                    <DateTime iso={h.oldestPendingAt} />
                  </td>
                  <td>{h.lagSeconds} s</td>
                  <td>{h.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </>
  );
}
