import { useState, type FormEvent, type ReactNode } from 'react';
import { api, seg, type BusinessAccount, type ConnectBody, type PhoneNumber, type PhoneNumberSync, type SyncCounts, type Template, type TemplateSync } from '../api';
import { DateTime, ErrorMessage, Notice, PageTitle, StatusBadge, TableRegion, TextField } from '../components';
import { useAction, useLoad } from '../hooks';
import { Link, navigate } from '../router';
import { useAccount } from './account-layout';
import { AccountHealthPanel } from './account-health';
import { AccountStandingSection } from './account-standing';
import { BlockedUsersSection, MarketingMessagesSection, MarketingPreferencesSection } from './account-users';

export function AccountsPage() {
  const accounts = useLoad(() => api.get<BusinessAccount[]>('/business-accounts'), []);
  return (
    <>
      <PageTitle title="Business accounts">Business accounts</PageTitle>
      <ErrorMessage error={accounts.error} />
      {!accounts.data && accounts.loading && <p role="status">Loading…</p>}
      {accounts.data && accounts.data.length === 0 && <p>No business account is connected yet. Connect one below to sync its numbers and templates.</p>}
      {accounts.data && accounts.data.length > 0 && (
        <TableRegion label="Business accounts">
          <table>
            <caption className="visually-hidden">Business accounts of your organization</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">WABA ID</th>
                <th scope="col">Status</th>
                <th scope="col">Numbers synced</th>
                <th scope="col">Templates synced</th>
              </tr>
            </thead>
            <tbody>
              {accounts.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link to={`/accounts/${seg(a.wabaId)}`}>{a.name}</Link>
                  </td>
                  <td className="mono">{a.wabaId}</td>
                  <td>
                    <StatusBadge status={a.status} />
                  </td>
                  <td>
                    <DateTime iso={a.phoneNumbersSyncedAt} fallback="never" />
                  </td>
                  <td>
                    <DateTime iso={a.templatesSyncedAt} fallback="never" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      <ConnectAccountForm />
    </>
  );
}

function ConnectAccountForm() {
  const [wabaId, setWabaId] = useState('');
  const [accessToken, setAccessToken] = useState('');
  const [name, setName] = useState('');
  const connect = useAction((body: ConnectBody) => api.post<BusinessAccount>('/business-accounts', body));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const account = await connect.run({ wabaId: wabaId.trim(), accessToken: accessToken.trim(), name: name.trim() || undefined });
    if (account) navigate(`/accounts/${seg(account.wabaId)}`);
  };

  return (
    <section aria-labelledby="connect-heading" className="card">
      <h2 id="connect-heading">Connect a business account</h2>
      <p className="muted">The access token (a system-user token of the WhatsApp Business Account) is checked with the platform, then stored encrypted. It is never shown again.</p>
      <form onSubmit={submit} noValidate className="form-grid">
        <TextField label="WABA ID" name="wabaId" inputMode="numeric" autoComplete="off" required value={wabaId} onChange={(e) => setWabaId(e.target.value)} error={connect.error?.field('wabaId')} />
        <TextField label="Access token" name="accessToken" type="password" autoComplete="off" required value={accessToken} onChange={(e) => setAccessToken(e.target.value)} error={connect.error?.field('accessToken')} />
        <TextField label="Display name (optional)" name="name" autoComplete="off" hint="Defaults to the name the platform reports." value={name} onChange={(e) => setName(e.target.value)} error={connect.error?.field('name')} />
        <ErrorMessage error={connect.error} fields={['wabaId', 'accessToken', 'name']} />
        <div className="form-actions">
          <button type="submit" disabled={connect.pending}>
            {connect.pending ? 'Connecting…' : 'Connect'}
          </button>
        </div>
      </form>
    </section>
  );
}

export function AccountOverviewPage({ wabaId }: { wabaId: string }) {
  const { account, reload } = useAccount();
  const base = `/business-accounts/${seg(wabaId)}`;
  const numbers = useLoad(() => api.get<PhoneNumber[]>(`${base}/phone-numbers`), [wabaId]);
  const templates = useLoad(() => api.get<Template[]>(`${base}/templates`), [wabaId]);
  const live = numbers.data?.filter((n) => !n.removed) ?? [];
  const liveTemplates = templates.data?.filter((t) => !t.removed) ?? [];

  return (
    <>
      <PageTitle title={`${account.name}: overview`}>{account.name}</PageTitle>
      <dl className="facts">
        <div>
          <dt>WABA ID</dt>
          <dd className="mono">{account.wabaId}</dd>
        </div>
        <div>
          <dt>Connected</dt>
          <dd>
            <DateTime iso={account.createdAt} />
          </dd>
        </div>
      </dl>
      {account.status === 'disconnected' && <Notice tone="warning">This business account is disconnected: its history stays readable, but it cannot be synced or get new keys until it is connected again.</Notice>}
      <AccountHealthPanel account={account} onChange={reload} />

      <AccountStandingSection standing={account.standing} />

      <MarketingMessagesSection state={account.marketingMessages} />

      <SyncSection
        id="numbers"
        title="Phone numbers"
        syncedAt={account.phoneNumbersSyncedAt}
        summary={numbers.data ? `${live.length} ${live.length === 1 ? 'number' : 'numbers'}, ${live.filter((n) => n.status === 'CONNECTED').length} connected` : 'Loading…'}
        disabled={account.status === 'disconnected'}
        sync={() => api.post<PhoneNumberSync>(`${base}/phone-numbers/sync`).then((r) => r.counts)}
        onSynced={() => {
          reload();
          numbers.reload();
        }}
      >
        <ErrorMessage error={numbers.error} />
        {live.length > 0 && (
          <TableRegion label="Phone numbers">
            <table>
              <caption className="visually-hidden">Synced phone numbers</caption>
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Phone number ID</th>
                  <th scope="col">Verified name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Quality</th>
                  <th scope="col">Messaging limit</th>
                  <th scope="col">Name review</th>
                </tr>
              </thead>
              <tbody>
                {live.map((n) => (
                  <tr key={n.phoneNumberId}>
                    <td>{n.displayPhoneNumber}</td>
                    <td className="mono">{n.phoneNumberId}</td>
                    <td>{n.verifiedName ?? '—'}</td>
                    <td>
                      <StatusBadge status={n.status} />
                    </td>
                    <td>
                      <StatusBadge status={n.qualityRating} />
                    </td>
                    <td className="mono">{n.messagingLimit ?? '—'}</td>
                    <td>{n.nameStatus ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
      </SyncSection>

      <SyncSection
        id="templates"
        title="Message templates"
        syncedAt={account.templatesSyncedAt}
        summary={templates.data ? `${liveTemplates.length} ${liveTemplates.length === 1 ? 'template' : 'templates'}, ${liveTemplates.filter((t) => t.sendable).length} approved` : 'Loading…'}
        disabled={account.status === 'disconnected'}
        sync={() => api.post<TemplateSync>(`${base}/templates/sync`).then((r) => r.counts)}
        onSynced={() => {
          reload();
          templates.reload();
        }}
      >
        <ErrorMessage error={templates.error} />
        {liveTemplates.length > 0 && (
          <TableRegion label="Message templates">
            <table>
              <caption className="visually-hidden">Synced message templates</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Language</th>
                  <th scope="col">Status</th>
                  <th scope="col">Category</th>
                  <th scope="col">Quality</th>
                </tr>
              </thead>
              <tbody>
                {liveTemplates.map((t) => (
                  <tr key={t.id}>
                    <td className="mono">{t.name}</td>
                    <td>{t.language}</td>
                    <td>
                      <StatusBadge status={t.status} />
                    </td>
                    <td>{t.category ?? '—'}</td>
                    <td>
                      <StatusBadge status={t.qualityScore} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
      </SyncSection>

      <BlockedUsersSection wabaId={wabaId} numbers={live} disabled={account.status === 'disconnected'} />
      <MarketingPreferencesSection wabaId={wabaId} />
    </>
  );
}

/** A synced resource: when it was last synced, how many there are, and a "Sync now" button. */
function SyncSection(props: {
  id: string;
  title: string;
  syncedAt: string | null;
  summary: string;
  disabled: boolean;
  sync: () => Promise<SyncCounts>;
  onSynced: () => void;
  children: ReactNode;
}) {
  const [result, setResult] = useState<SyncCounts>();
  const action = useAction(props.sync);
  const run = async () => {
    setResult(undefined);
    const counts = await action.run();
    if (counts) {
      setResult(counts);
      props.onSynced();
    }
  };
  const headingId = `${props.id}-heading`;
  return (
    <section aria-labelledby={headingId} className="card" data-testid={`sync-${props.id}`}>
      <div className="card-head">
        <div>
          <h2 id={headingId}>{props.title}</h2>
          <p className="muted">
            Last synced: <DateTime iso={props.syncedAt} fallback="never" /> · <span className="sync-summary">{props.summary}</span>
          </p>
        </div>
        <button type="button" onClick={run} disabled={action.pending || props.disabled} aria-describedby={headingId}>
          {action.pending ? 'Syncing…' : 'Sync now'}
        </button>
      </div>
      <ErrorMessage error={action.error} />
      {result && (
        <Notice tone="success">
          Sync complete: {result.added} added, {result.updated} updated, {result.removed} removed ({result.total} in total).
        </Notice>
      )}
      {props.children}
    </section>
  );
}
