import { useState, type FormEvent, type ReactNode } from 'react';
import {
  api,
  seg,
  type BusinessAccount,
  type ConnectBody,
  type Page,
  type PhoneNumber,
  type PhoneNumberSync,
  type SyncCounts,
  type Template,
  type TemplateSync,
} from '../api';
import {
  DateTime,
  ErrorMessage,
  Notice,
  PageTitle,
  Pagination,
  StatusBadge,
  TableRegion,
  TextField,
} from '../components';
import { useAction, useLoad } from '../hooks';
import { Link, navigate, setQuery, useLocation } from '../router';
import { useAccount } from './account-layout';
import { AccountHealthPanel } from './account-health';
import { AccountStandingSection } from './account-standing';
import { BlockedUsersSection, MarketingMessagesSection, MarketingPreferencesSection } from './account-users';
import { TemplateEditor } from './template-editor';

export function AccountsPage() {
  const { search } = useLocation();
  const page = Number(search.get('page')) || 1;
  const accounts = useLoad(() => api.get<Page<BusinessAccount>>('/business-accounts', { page, limit: 20 }), [page]);
  return (
    <>
      <PageTitle title="Business accounts">Business accounts</PageTitle>
      <ErrorMessage error={accounts.error} />
      {!accounts.data && accounts.loading && <p role="status">Loading…</p>}
      {accounts.data && accounts.data.total === 0 && (
        <p className="empty-state">
          No business account is connected yet. Next: enter its WABA ID and a system-user access token below (with the
          local simulator: <span className="mono">310000000000002</span> and{' '}
          <span className="mono">sim-token-waba-2</span>), then sync its numbers and templates and create a key pair.
        </p>
      )}
      {accounts.data && accounts.data.items.length > 0 && (
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
              {accounts.data.items.map((a) => (
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
          <Pagination
            label="Business accounts"
            page={accounts.data.page}
            totalPages={accounts.data.totalPages}
            total={accounts.data.total}
            onPage={(p) => setQuery('/', { page: p })}
          />
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
    const account = await connect.run({
      wabaId: wabaId.trim(),
      accessToken: accessToken.trim(),
      name: name.trim() || undefined,
    });
    if (account) navigate(`/accounts/${seg(account.wabaId)}`);
  };

  return (
    <section aria-labelledby="connect-heading" className="card">
      <h2 id="connect-heading">Connect a business account</h2>
      <p className="muted">
        The access token (a system-user token of the WhatsApp Business Account) is checked with the platform, then
        stored encrypted. It is never shown again.
      </p>
      <form onSubmit={(e) => void submit(e)} noValidate className="form-grid">
        <TextField
          label="WABA ID"
          name="wabaId"
          inputMode="numeric"
          autoComplete="off"
          required
          value={wabaId}
          onChange={(e) => setWabaId(e.target.value)}
          error={connect.error?.field('wabaId')}
        />
        <TextField
          label="Access token"
          name="accessToken"
          type="password"
          autoComplete="off"
          required
          value={accessToken}
          onChange={(e) => setAccessToken(e.target.value)}
          error={connect.error?.field('accessToken')}
        />
        <TextField
          label="Display name (optional)"
          name="name"
          autoComplete="off"
          hint="Defaults to the name the platform reports."
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={connect.error?.field('name')}
        />
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
  const [templatePage, setTemplatePage] = useState(1);
  // Numbers: an account has a handful; the first 100 (current ones first) are all there is in practice.
  const numbers = useLoad(() => api.get<Page<PhoneNumber>>(`${base}/phone-numbers`, { page: 1, limit: 100 }), [wabaId]);
  const templates = useLoad(
    () => api.get<Page<Template>>(`${base}/templates`, { page: templatePage, limit: 20 }),
    [wabaId, templatePage],
  );
  const approved = useLoad(
    () => api.get<Page<Template>>(`${base}/templates`, { status: 'APPROVED', page: 1, limit: 1 }),
    [wabaId],
  );
  const [editing, setEditing] = useState<Template>();
  const removeTemplate = useAction((t: Template) => api.delete<Template>(`${base}/templates/${seg(t.id)}`));
  const templatesChanged = () => {
    templates.reload();
    approved.reload();
  };
  const live = numbers.data?.items.filter((n) => !n.removed) ?? [];
  const neverSynced = (syncedAt: string | null) => (syncedAt ? '' : ' Press “Sync now” to fetch them from WhatsApp.');

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
      {account.status === 'disconnected' && (
        <Notice tone="warning">
          This business account is disconnected: its history stays readable, but it cannot be synced or get new keys
          until it is connected again.
        </Notice>
      )}
      <AccountHealthPanel account={account} onChange={reload} />

      <AccountStandingSection standing={account.standing} />

      <MarketingMessagesSection state={account.marketingMessages} />

      <SyncSection
        id="numbers"
        title="Phone numbers"
        syncedAt={account.phoneNumbersSyncedAt}
        summary={
          numbers.data
            ? `${live.length} ${live.length === 1 ? 'number' : 'numbers'}, ${live.filter((n) => n.status === 'CONNECTED').length} connected`
            : 'Loading…'
        }
        disabled={account.status === 'disconnected'}
        sync={() => api.post<PhoneNumberSync>(`${base}/phone-numbers/sync`).then((r) => r.counts)}
        onSynced={() => {
          reload();
          numbers.reload();
        }}
      >
        <ErrorMessage error={numbers.error} />
        {numbers.data && live.length === 0 && (
          <p className="empty-state">
            No phone numbers{account.phoneNumbersSyncedAt ? ' at the last sync' : ' yet'}.
            {neverSynced(account.phoneNumbersSyncedAt)} A connected number is what you send from (its ID is the
            phoneNumberId of POST /messages).
          </p>
        )}
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
        summary={
          templates.data && approved.data
            ? `${templates.data.total} ${templates.data.total === 1 ? 'template' : 'templates'}, ${approved.data.total} approved`
            : 'Loading…'
        }
        disabled={account.status === 'disconnected'}
        sync={() => api.post<TemplateSync>(`${base}/templates/sync`).then((r) => r.counts)}
        onSynced={() => {
          reload();
          templates.reload();
          approved.reload();
        }}
      >
        <ErrorMessage error={templates.error} />
        <ErrorMessage error={removeTemplate.error} />
        {templates.data && templates.data.total === 0 && (
          <p className="empty-state">
            No message templates{account.templatesSyncedAt ? ' at the last sync' : ' yet'}.
            {neverSynced(account.templatesSyncedAt)} An APPROVED template is what you may send to anyone, any time.
          </p>
        )}
        {templates.data && templates.data.items.length > 0 && (
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
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {templates.data.items.map((t) => (
                  <tr key={t.id}>
                    <td className="mono">
                      {t.name}
                      {t.removed && <span className="muted"> (removed upstream)</span>}
                    </td>
                    <td>{t.language}</td>
                    <td>
                      <StatusBadge status={t.status} />
                    </td>
                    <td>{t.category ?? '—'}</td>
                    <td>
                      <StatusBadge status={t.qualityScore} />
                    </td>
                    <td>
                      {!t.removed && account.status !== 'disconnected' && (
                        <span className="row-actions">
                          <button
                            type="button"
                            className="secondary"
                            title={`Edit ${t.name} (${t.language})`}
                            onClick={() => setEditing(t)}
                          >
                            Edit
                          </button>
                          <button
                            type="button"
                            className="secondary"
                            disabled={removeTemplate.pending}
                            title={`Delete ${t.name} (${t.language}) at WhatsApp`}
                            onClick={() => {
                              if (window.confirm(`Delete ${t.name} (${t.language}) at WhatsApp?`))
                                void removeTemplate.run(t).then((done) => done && templatesChanged());
                            }}
                          >
                            Delete
                          </button>
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination
              label="Message templates"
              page={templates.data.page}
              totalPages={templates.data.totalPages}
              total={templates.data.total}
              onPage={setTemplatePage}
            />
          </TableRegion>
        )}
      </SyncSection>

      {account.status !== 'disconnected' && (
        <TemplateEditor
          wabaId={wabaId}
          editing={editing}
          onDone={(saved) => {
            setEditing(undefined);
            if (saved) templatesChanged();
          }}
        />
      )}

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
            Last synced: <DateTime iso={props.syncedAt} fallback="never" /> ·{' '}
            <span className="sync-summary">{props.summary}</span>
          </p>
        </div>
        <button
          type="button"
          onClick={() => void run()}
          disabled={action.pending || props.disabled}
          aria-describedby={headingId}
        >
          {action.pending ? 'Syncing…' : 'Sync now'}
        </button>
      </div>
      <ErrorMessage error={action.error} />
      {result && (
        <Notice tone="success">
          Sync complete: {result.added} added, {result.updated} updated, {result.removed} removed ({result.total} in
          total).
        </Notice>
      )}
      {props.children}
    </section>
  );
}
