import { useRef, useState, useEffect, type FormEvent } from 'react';
import {
  api,
  seg,
  type ApiKey,
  type BusinessAccount,
  type CreateApiKeyBody,
  type CreatedApiKey,
  type Page,
} from '../api';
import {
  CopyButton,
  DateTime,
  ErrorMessage,
  PageTitle,
  Pagination,
  SelectField,
  TableRegion,
  TextField,
} from '../components';
import { useAction, useLoad } from '../hooks';
import { Link, setQuery, useLocation } from '../router';

export function KeysPage() {
  const { search } = useLocation();
  const page = Number(search.get('page')) || 1;
  // The accounts a key can be made for: the first 100 of the organization (a page as large as the API gives).
  const accounts = useLoad(() => api.get<Page<BusinessAccount>>('/business-accounts', { page: 1, limit: 100 }), []);
  const keys = useLoad(() => api.get<Page<ApiKey>>('/api-keys', { page, limit: 20 }), [page]);
  const [created, setCreated] = useState<CreatedApiKey>();

  return (
    <>
      <PageTitle title="API keys">API keys</PageTitle>
      <p className="muted">
        A key pair lets a backend send and read messages of one business account: send both halves as the{' '}
        <code>x-access-key</code> and <code>x-secret-key</code> headers.
      </p>
      {created ? (
        <NewKey apiKey={created} onDone={() => setCreated(undefined)} />
      ) : (
        <CreateKeyForm
          accounts={accounts.data?.items.filter((a) => a.status === 'connected') ?? []}
          onCreated={(key) => {
            setCreated(key);
            keys.reload();
          }}
        />
      )}
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Key pairs</h2>
        <ErrorMessage error={keys.error} />
        {!keys.data && keys.loading && <p role="status">Loading…</p>}
        {keys.data && keys.data.total === 0 && (
          <p className="empty-state">
            No key pairs yet. Create one above for a business account: its secret is shown once, and the pair is what
            POST /messages takes (x-access-key, x-secret-key).
          </p>
        )}
        {keys.data && keys.data.total > 0 && (
          <>
            <TableRegion label="Key pairs">
              <table>
                <caption className="visually-hidden">Key pairs of your organization, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Business account</th>
                    <th scope="col">Access key</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {keys.data.items.map((key) => (
                    <KeyRow key={key.id} apiKey={key} onRevoked={keys.reload} />
                  ))}
                </tbody>
              </table>
            </TableRegion>
            <Pagination
              label="Key pairs"
              page={keys.data.page}
              totalPages={keys.data.totalPages}
              total={keys.data.total}
              onPage={(p) => setQuery('/keys', { page: p })}
            />
          </>
        )}
      </section>
    </>
  );
}

function CreateKeyForm({
  accounts,
  onCreated,
}: {
  accounts: BusinessAccount[];
  onCreated: (key: CreatedApiKey) => void;
}) {
  const [wabaId, setWabaId] = useState('');
  const [name, setName] = useState('');
  const create = useAction((body: CreateApiKeyBody) => api.post<CreatedApiKey>('/api-keys', body));
  const selected = wabaId || accounts[0]?.wabaId || '';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = await create.run({ wabaId: selected, name: name.trim() });
    if (key) {
      setName('');
      onCreated(key);
    }
  };

  return (
    <section aria-labelledby="create-key-heading" className="card">
      <h2 id="create-key-heading">Create a key pair</h2>
      {accounts.length === 0 ? (
        <p className="empty-state">
          Connect a business account first (<Link to="/">Business accounts</Link>): a key pair belongs to exactly one.
        </p>
      ) : (
        <form onSubmit={(e) => void submit(e)} noValidate className="form-grid">
          <SelectField
            label="Business account"
            name="wabaId"
            value={selected}
            onChange={(e) => setWabaId(e.target.value)}
            options={accounts.map((a) => ({ value: a.wabaId, label: `${a.name} (${a.wabaId})` }))}
            error={create.error?.field('wabaId')}
          />
          <TextField
            label="Key name"
            name="name"
            hint="Where it is used, e.g. “orders-service production”."
            autoComplete="off"
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={create.error?.field('name')}
          />
          <ErrorMessage error={create.error} fields={['wabaId', 'name']} />
          <div className="form-actions">
            <button type="submit" disabled={create.pending}>
              {create.pending ? 'Creating…' : 'Create key pair'}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** The one moment the secret exists outside the customer's systems: it lives in this component's state only. */
function NewKey({ apiKey, onDone }: { apiKey: CreatedApiKey; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section aria-labelledby="new-key-heading" className="card card-warning" data-testid="new-key">
      <h2 id="new-key-heading" ref={heading} tabIndex={-1}>
        Key pair “{apiKey.name}” created
      </h2>
      <p className="warning-text">
        <strong>Copy the secret key now. It is shown only this once</strong>: we keep only a hash of it and cannot show
        it again. If it is lost, create a new key pair and revoke this one.
      </p>
      <div className="secret-row">
        <TextField id="new-access-key" label="Access key" readOnly value={apiKey.accessKey} className="mono-input" />
        <CopyButton value={apiKey.accessKey} label="Copy access key" fieldId="new-access-key" />
      </div>
      <div className="secret-row">
        <TextField id="new-secret-key" label="Secret key" readOnly value={apiKey.secretKey} className="mono-input" />
        <CopyButton value={apiKey.secretKey} label="Copy secret key" fieldId="new-secret-key" />
      </div>
      <button type="button" onClick={onDone}>
        I have stored the secret key
      </button>
    </section>
  );
}

function KeyRow({ apiKey, onRevoked }: { apiKey: ApiKey; onRevoked: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const revoke = useAction(() => api.delete<ApiKey>(`/api-keys/${seg(apiKey.id)}`));
  const confirm = async () => {
    if (await revoke.run()) {
      setConfirming(false);
      onRevoked();
    }
  };
  return (
    <tr>
      <td>{apiKey.name}</td>
      <td className="mono">{apiKey.wabaId}</td>
      <td className="mono">{apiKey.accessKey}</td>
      <td>
        <DateTime iso={apiKey.createdAt} />
      </td>
      <td>
        <DateTime iso={apiKey.lastUsedAt} fallback="never" />
      </td>
      <td>
        {apiKey.revokedAt ? (
          <span className="badge badge-revoked">
            revoked <DateTime iso={apiKey.revokedAt} />
          </span>
        ) : confirming ? (
          <div className="confirm" role="group" aria-label={`Revoke ${apiKey.name}?`}>
            <span>Revoke? Requests with it are refused at once.</span>
            <button type="button" className="danger" onClick={() => void confirm()} disabled={revoke.pending}>
              Yes, revoke
            </button>
            {/* Focus lands on the harmless choice when the question appears. */}
            <button type="button" className="secondary" onClick={() => setConfirming(false)} autoFocus>
              Cancel
            </button>
            <ErrorMessage error={revoke.error} />
          </div>
        ) : (
          <>
            <span className="badge badge-active">active</span>{' '}
            <button
              type="button"
              className="secondary"
              aria-label={`Revoke ${apiKey.name}`}
              onClick={() => setConfirming(true)}
            >
              Revoke
            </button>
          </>
        )}
      </td>
    </tr>
  );
}
