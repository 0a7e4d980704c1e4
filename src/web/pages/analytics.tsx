import { useMemo, useState } from 'react';
import { api, seg, type Analytics, type Counts } from '../api';
import { DateTime, ErrorMessage, PageTitle, rateOf, SelectField, TableRegion } from '../components';
import { useLoad } from '../hooks';
import { useAccount } from './account-layout';

const HOUR_MS = 3600_000;
const PERIODS = {
  '7d': { label: 'Last 7 days', ms: 7 * 24 * HOUR_MS, granularity: 'day' },
  '30d': { label: 'Last 30 days', ms: 30 * 24 * HOUR_MS, granularity: 'day' },
  '24h': { label: 'Last 24 hours (hourly)', ms: 24 * HOUR_MS, granularity: 'hour' },
} as const;
type Period = keyof typeof PERIODS;

/** Series drawn, with colours that keep 3:1 against white and differ in lightness as well as hue. */
const SERIES: Array<{ key: keyof Counts; label: string; color: string }> = [
  { key: 'sent', label: 'Sent', color: '#1d4ed8' },
  { key: 'delivered', label: 'Delivered', color: '#0f766e' },
  { key: 'read', label: 'Read', color: '#7e22ce' },
  { key: 'failed', label: 'Failed', color: '#b91c1c' },
];

export function AnalyticsPage({ wabaId }: { wabaId: string }) {
  const { account } = useAccount();
  const [period, setPeriod] = useState<Period>('7d');
  const stats = useLoad(() => {
    const { ms, granularity } = PERIODS[period];
    return api.get<Analytics>(`/business-accounts/${seg(wabaId)}/messages-analytics`, {
      since: new Date(Date.now() - ms).toISOString(),
      granularity,
    });
  }, [wabaId, period]);
  const a = stats.data;

  return (
    <>
      <PageTitle title={`${account.name}: analytics`}>Analytics</PageTitle>
      <div className="filters">
        <SelectField
          label="Period"
          name="period"
          value={period}
          onChange={(e) => setPeriod(e.target.value as Period)}
          options={Object.entries(PERIODS).map(([value, p]) => ({ value, label: p.label }))}
        />
      </div>
      <ErrorMessage error={stats.error} />
      {a && (
        <>
          <ul className="stat-cards" aria-label="Rates">
            <li>
              <span className="stat-label">Messages</span>
              <span className="stat-value">{a.totals.total}</span>
            </li>
            <li>
              <span className="stat-label">Delivery rate</span>
              <span className="stat-value">{rateOf(a.rates.delivery, a.totals.total)}</span>
              <span className="muted">{a.totals.delivered} delivered</span>
            </li>
            <li>
              <span className="stat-label">Read rate</span>
              <span className="stat-value">{rateOf(a.rates.read, a.totals.total)}</span>
              <span className="muted">{a.totals.read} read</span>
            </li>
            <li>
              <span className="stat-label">Failure rate</span>
              <span className="stat-value">{rateOf(a.rates.failure, a.totals.total)}</span>
              <span className="muted">{a.totals.failed} failed</span>
            </li>
          </ul>
          {a.totals.total === 0 && (
            <p className="empty-state">
              Nothing sent in this period, so there is nothing to rate yet: send a message with a key pair of this
              account, or pick a longer period.
            </p>
          )}
          <section aria-labelledby="chart-heading" className="card">
            <h2 id="chart-heading">{a.granularity === 'day' ? 'Daily' : 'Hourly'} messages</h2>
            <BarChart analytics={a} />
          </section>
          {a.failureReasons.length > 0 && (
            <section aria-labelledby="reasons-heading">
              <h2 id="reasons-heading">Failure reasons</h2>
              <TableRegion label="Failure reasons">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Code</th>
                      <th scope="col">Reason</th>
                      <th scope="col">Messages</th>
                    </tr>
                  </thead>
                  <tbody>
                    {a.failureReasons.map((r, i) => (
                      <tr key={i}>
                        <td className="mono">{r.code ?? '—'}</td>
                        <td>{r.title ?? 'unknown'}</td>
                        <td>{r.count}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableRegion>
            </section>
          )}
          <PricingSection analytics={a} />
          {a.templates.length > 0 && (
            <section aria-labelledby="templates-heading">
              <h2 id="templates-heading">By template</h2>
              <TableRegion label="By template">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Template</th>
                      <th scope="col">Messages</th>
                      <th scope="col">Delivered</th>
                      <th scope="col">Read</th>
                      <th scope="col">Failed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {a.templates.map((t) => (
                      <tr key={t.templateName}>
                        <td className="mono">{t.templateName}</td>
                        <td>{t.total}</td>
                        <td>{t.delivered}</td>
                        <td>{t.read}</td>
                        <td>{t.failed}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableRegion>
            </section>
          )}
        </>
      )}
    </>
  );
}

const W = 720;
const H = 260;
const PAD = { top: 12, right: 12, bottom: 40, left: 44 };

/** A round axis maximum (1, 2, 5 × 10^n) at or above the largest value. */
function niceMax(value: number): number {
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * magnitude).find((m) => m >= value)!;
}

/**
 * Grouped bars per bucket, drawn as SVG by hand (no chart library). The same numbers are in a table below
 * it for screen readers and anyone who prefers numbers.
 */
function BarChart({ analytics }: { analytics: Analytics }) {
  const { series, granularity } = analytics;
  const label = useMemo(() => {
    const format = new Intl.DateTimeFormat(
      undefined,
      granularity === 'day'
        ? { month: 'short', day: 'numeric', timeZone: 'UTC' }
        : { hour: '2-digit', minute: '2-digit' },
    );
    return (iso: string) => format.format(new Date(iso));
  }, [granularity]);
  const max = niceMax(Math.max(0, ...series.flatMap((b) => SERIES.map((s) => b[s.key]))));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(series.length, 1);
  const barW = Math.max(1, (slot * 0.8) / SERIES.length);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(f * max));
  const labelEvery = Math.ceil(series.length / 10);
  const empty = series.every((b) => SERIES.every((s) => b[s.key] === 0));

  return (
    <figure className="chart">
      <ul className="legend" aria-hidden="true">
        {SERIES.map((s) => (
          <li key={s.key}>
            <span className="swatch" style={{ background: s.color }} /> {s.label}
          </li>
        ))}
      </ul>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-desc" preserveAspectRatio="xMidYMid meet">
        <desc id="chart-desc">
          Bar chart of sent, delivered, read and failed messages per {granularity} from {label(analytics.since)} to{' '}
          {label(analytics.until)}; {empty ? 'no messages in this period' : 'the figures are in the table below'}.
        </desc>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} className="grid" />
            <text x={PAD.left - 6} y={y(t)} textAnchor="end" dominantBaseline="middle" className="axis">
              {t}
            </text>
          </g>
        ))}
        {series.map((b, i) => (
          <g key={b.bucket} transform={`translate(${PAD.left + i * slot + slot * 0.1},0)`}>
            {SERIES.map((s, j) => (
              <rect
                key={s.key}
                x={j * barW}
                y={y(b[s.key])}
                width={Math.max(barW - 1, 1)}
                height={plotH + PAD.top - y(b[s.key])}
                fill={s.color}
              >
                <title>{`${label(b.bucket)}: ${b[s.key]} ${s.label.toLowerCase()}`}</title>
              </rect>
            ))}
            {i % labelEvery === 0 && (
              <text x={(slot * 0.8) / 2} y={H - PAD.bottom + 16} textAnchor="middle" className="axis">
                {label(b.bucket)}
              </text>
            )}
          </g>
        ))}
        <line x1={PAD.left} x2={W - PAD.right} y1={PAD.top + plotH} y2={PAD.top + plotH} className="baseline" />
      </svg>
      <details>
        <summary>Chart data as a table</summary>
        <TableRegion label="Chart data">
          <table>
            <thead>
              <tr>
                <th scope="col">{granularity === 'day' ? 'Day (UTC)' : 'Hour'}</th>
                {SERIES.map((s) => (
                  <th scope="col" key={s.key}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {series.map((b) => (
                <tr key={b.bucket}>
                  <td>{label(b.bucket)}</td>
                  {SERIES.map((s) => (
                    <td key={s.key}>{b[s.key]}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      </details>
    </figure>
  );
}

/** How many messages Meta priced per category and type, over the range and per bucket (counts, not amounts). */
function PricingSection({ analytics: a }: { analytics: Analytics }) {
  // Meta lists eleven categories; the table shows those that priced something in the range (marketing, utility and
  // service always).
  const categories = Object.keys(a.pricing.byCategory).filter(
    (c) => ['marketing', 'utility', 'service'].includes(c) || (a.pricing.byCategory[c] ?? 0) > 0,
  );
  const types = Object.keys(a.pricing.byType);
  return (
    <section aria-labelledby="pricing-heading">
      <h2 id="pricing-heading">Pricing</h2>
      <p className="muted">
        Messages by the pricing Meta reported in their status webhooks. Counts only: Meta bills the customer directly.
        Billable: priced <code>regular</code> (since October 2026 service messages are billed too); {a.pricing.billable}{' '}
        in the range.
      </p>
      <TableRegion label="Pricing">
        <table>
          <thead>
            <tr>
              <th scope="col">{a.granularity === 'day' ? 'Day' : 'Hour'}</th>
              {categories.map((c) => (
                <th scope="col" key={`c-${c}`}>
                  {c}
                </th>
              ))}
              {types.map((t) => (
                <th scope="col" key={`t-${t}`}>
                  {t}
                </th>
              ))}
              <th scope="col">billable</th>
            </tr>
          </thead>
          <tbody>
            {a.series
              .filter((b) => Object.values(b.pricing.byType).some((n) => n > 0))
              .map((b) => (
                <tr key={b.bucket}>
                  <td>
                    <DateTime iso={b.bucket} />
                  </td>
                  {categories.map((c) => (
                    <td key={`c-${c}`}>{b.pricing.byCategory[c] ?? 0}</td>
                  ))}
                  {types.map((t) => (
                    <td key={`t-${t}`}>{b.pricing.byType[t] ?? 0}</td>
                  ))}
                  <td>{b.pricing.billable}</td>
                </tr>
              ))}
            <tr>
              <th scope="row">Total</th>
              {categories.map((c) => (
                <td key={`c-${c}`}>{a.pricing.byCategory[c]}</td>
              ))}
              {types.map((t) => (
                <td key={`t-${t}`}>{a.pricing.byType[t]}</td>
              ))}
              <td>{a.pricing.billable}</td>
            </tr>
          </tbody>
        </table>
      </TableRegion>
    </section>
  );
}
