import type { AccountStanding } from '../api';
import { DateTime, Notice, StatusBadge, TableRegion } from '../components';

/**
 * The account's standing with Meta (its account_update and account_alerts webhooks): ban state, restrictions,
 * violation, volume pricing tiers and active alerts. A section of its own on the overview page: the
 * subscription and credential state of the account live in another section.
 */
export function AccountStandingSection({ standing }: { standing: AccountStanding }) {
  const active = standing.restrictions.filter((r) => r.active);
  const clean = !standing.banState && standing.restrictions.length === 0 && !standing.violationType && standing.alerts.length === 0;
  return (
    <section aria-labelledby="standing-heading" className="card" data-testid="account-standing">
      <h2 id="standing-heading">Standing with Meta</h2>
      {standing.banned && (
        <Notice tone="warning">
          Meta disabled this business account{standing.banDate ? ` (since ${standing.banDate})` : ''}: every send is refused until Meta reinstates it.
        </Notice>
      )}
      {active.length > 0 && <Notice tone="warning">Restricted by Meta: {active.map((r) => r.type).join(', ')}. Sends of the restricted kind are refused while it is in force.</Notice>}
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
        <TableRegion label="Restrictions">
          <table>
            <caption>Restrictions</caption>
            <thead>
              <tr>
                <th scope="col">Restriction</th>
                <th scope="col">Until</th>
                <th scope="col">In force</th>
              </tr>
            </thead>
            <tbody>
              {standing.restrictions.map((r) => (
                <tr key={r.type}>
                  <td className="mono">{r.type}</td>
                  <td>{r.expiration ?? '—'}</td>
                  <td>{r.active ? 'yes' : 'expired'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      {standing.alerts.length > 0 && (
        <TableRegion label="Alerts">
          <table>
            <caption>Active alerts</caption>
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">Severity</th>
                <th scope="col">Concerns</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {standing.alerts.map((a) => (
                <tr key={`${a.type ?? ''}-${a.entityId ?? ''}`}>
                  <td className="mono">{a.type ?? '—'}</td>
                  <td>
                    <StatusBadge status={a.severity} />
                  </td>
                  <td>{[a.entityType, a.entityId].filter(Boolean).join(' ') || '—'}</td>
                  <td>{a.description ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      {standing.pricingTiers.length > 0 && (
        <TableRegion label="Volume pricing tiers">
          <table>
            <caption>Volume pricing tiers</caption>
            <thead>
              <tr>
                <th scope="col">Category</th>
                <th scope="col">Region</th>
                <th scope="col">Tier</th>
                <th scope="col">Month</th>
              </tr>
            </thead>
            <tbody>
              {standing.pricingTiers.map((t) => (
                <tr key={`${t.pricingCategory ?? ''}-${t.region ?? ''}`}>
                  <td>{t.pricingCategory ?? '—'}</td>
                  <td>{t.region ?? '—'}</td>
                  <td className="mono">{t.tier ?? '—'}</td>
                  <td>{t.effectiveMonth ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  );
}
