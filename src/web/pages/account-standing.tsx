import type { ReactNode } from 'react';
import type { AccountStanding } from '../api';
import { DateTime, Notice, StatusBadge, TableRegion } from '../components';

/**
 * The account's standing with Meta (its account_update and account_alerts webhooks): ban state, restrictions,
 * violation, volume pricing tiers and active alerts. A section of its own on the overview page: the
 * subscription and credential state of the account live in another section.
 */
export function AccountStandingSection({ standing }: { standing: AccountStanding }) {
  const active = standing.restrictions.filter((r) => r.active);
  const clean =
    !standing.banState && standing.restrictions.length === 0 && !standing.violationType && standing.alerts.length === 0;
  return (
    <section aria-labelledby="standing-heading" className="card" data-testid="account-standing">
      <h2 id="standing-heading">Standing with Meta</h2>
      {standing.banned && (
        <Notice tone="warning">
          Meta disabled this business account{standing.banDate ? ` (since ${standing.banDate})` : ''}: every send is
          refused until Meta reinstates it.
        </Notice>
      )}
      {active.length > 0 && (
        <Notice tone="warning">
          Restricted by Meta: {active.map((r) => r.type).join(', ')}. Sends of the restricted kind are refused while it
          is in force.
        </Notice>
      )}
      {clean && <p className="muted">Meta has reported no ban, restriction, violation or alert for this account.</p>}
      <dl className="facts">
        <div>
          <dt>Ban state</dt>
          <dd>
            <StatusBadge status={standing.banState} />
          </dd>
        </div>
        <div>
          <dt>Violation</dt>
          <dd>{standing.violationType ?? '—'}</dd>
        </div>
        <div>
          <dt>Last change</dt>
          <dd>
            <DateTime iso={standing.updatedAt} fallback="never" />
          </dd>
        </div>
      </dl>
      {standing.restrictions.length > 0 && (
        <ListTable
          caption="Restrictions"
          headers={['Restriction', 'Until', 'In force']}
          rows={standing.restrictions.map((r) => ({
            key: r.type,
            cells: [<span className="mono">{r.type}</span>, r.expiration ?? '—', r.active ? 'yes' : 'expired'],
          }))}
        />
      )}
      {standing.alerts.length > 0 && (
        <ListTable
          caption="Active alerts"
          headers={['Alert', 'Severity', 'Concerns', 'Description']}
          rows={standing.alerts.map((a) => ({
            key: `${a.type ?? ''}-${a.entityId ?? ''}`,
            cells: [
              <span className="mono">{a.type ?? '—'}</span>,
              <StatusBadge status={a.severity} />,
              [a.entityType, a.entityId].filter(Boolean).join(' ') || '—',
              a.description ?? '—',
            ],
          }))}
        />
      )}
      {standing.pricingTiers.length > 0 && (
        <ListTable
          caption="Volume pricing tiers"
          headers={['Category', 'Region', 'Tier', 'Month']}
          rows={standing.pricingTiers.map((t) => ({
            key: `${t.pricingCategory ?? ''}-${t.region ?? ''}`,
            cells: [
              t.pricingCategory ?? '—',
              t.region ?? '—',
              <span className="mono">{t.tier ?? '—'}</span>,
              t.effectiveMonth ?? '—',
            ],
          }))}
        />
      )}
    </section>
  );
}

/** A small captioned table of the standing's lists. */
function ListTable({
  caption,
  headers,
  rows,
}: {
  caption: string;
  headers: string[];
  rows: Array<{ key: string; cells: ReactNode[] }>;
}) {
  return (
    <TableRegion label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {headers.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              {row.cells.map((cell, i) => (
                <td key={headers[i]}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}
