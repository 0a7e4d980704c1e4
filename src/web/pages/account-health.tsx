import { useState, type FormEvent } from 'react';
import { api, seg, type BusinessAccount } from '../api';
import { DateTime, ErrorMessage, Notice, StatusBadge, TextField } from '../components';
import { useAction } from '../hooks';

/**
 * The account's health: whether the app is subscribed to its webhooks ("Subscribe" makes the subscription
 * again) and whether the upstream platform still accepts its stored token ("Check now", and replacing it).
 */
export function AccountHealthPanel({ account, onChange }: { account: BusinessAccount; onChange: () => void }) {
  const base = `/business-accounts/${seg(account.wabaId)}`;
  const disconnected = account.status === 'disconnected';
  const subscribe = useAction(() => api.post<BusinessAccount>(`${base}/subscription`));
  const check = useAction(() => api.post<BusinessAccount>(`${base}/credentials/check`));
  // useAction's run never rejects (it keeps the error for ErrorMessage).
  const run = (action: { run: () => Promise<BusinessAccount | undefined> }) => () => {
    void action.run().then((done) => done && onChange());
  };

  return (
    <section aria-labelledby="health-heading" className="card" data-testid="account-health">
      <h2 id="health-heading">Account health</h2>
      <HealthRow
        title="Webhook subscription"
        state={account.webhooksSubscribed ? 'subscribed' : 'unsubscribed'}
        checkedAt={account.webhooksCheckedAt}
        action="Subscribe"
        pendingLabel="Subscribing…"
        run={run(subscribe)}
        pending={subscribe.pending}
        disabled={disconnected}
      />
      {!account.webhooksSubscribed && !disconnected && (
        <Notice tone="warning">
          The platform delivers no webhooks (statuses, inbound messages, template decisions) for this account until the
          app is subscribed.
        </Notice>
      )}
      <ErrorMessage error={subscribe.error} />

      <HealthRow
        title="Access token"
        state={account.credentialsValid ? 'valid' : 'rejected'}
        checkedAt={account.credentialsCheckedAt}
        action="Check now"
        pendingLabel="Checking…"
        run={run(check)}
        pending={check.pending}
        disabled={disconnected}
      />
      {!account.credentialsValid && (
        <Notice tone="warning">
          The platform rejected the stored access token{account.credentialsError ? `: ${account.credentialsError}` : ''}
          . Sends are refused (424) until it is replaced.
        </Notice>
      )}
      <ErrorMessage error={check.error} />
      {!disconnected && <ReplaceTokenForm wabaId={account.wabaId} onReplaced={onChange} />}
    </section>
  );
}

/** One health aspect: its state, when it was last checked, and the button that acts on it. */
function HealthRow(props: {
  title: string;
  state: string;
  checkedAt: string | null;
  action: string;
  pendingLabel: string;
  run: () => void;
  pending: boolean;
  disabled: boolean;
}) {
  return (
    <div className="card-head">
      <div>
        <h3>{props.title}</h3>
        <p className="muted">
          <StatusBadge status={props.state} /> Last checked: <DateTime iso={props.checkedAt} fallback="never" />
        </p>
      </div>
      <button type="button" onClick={props.run} disabled={props.pending || props.disabled}>
        {props.pending ? props.pendingLabel : props.action}
      </button>
    </div>
  );
}

function ReplaceTokenForm({ wabaId, onReplaced }: { wabaId: string; onReplaced: () => void }) {
  const [accessToken, setAccessToken] = useState('');
  const [done, setDone] = useState(false);
  const replace = useAction((token: string) =>
    api.put<BusinessAccount>(`/business-accounts/${seg(wabaId)}/access-token`, { accessToken: token }),
  );
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    if (await replace.run(accessToken.trim())) {
      setAccessToken('');
      setDone(true);
      onReplaced();
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate className="form-grid" aria-label="Replace the access token">
      <TextField
        label="New access token"
        name="accessToken"
        type="password"
        autoComplete="off"
        required
        value={accessToken}
        onChange={(e) => setAccessToken(e.target.value)}
        hint="Checked with the platform and subscribed to webhooks before it replaces the stored one; API keys stay valid."
        error={replace.error?.field('accessToken')}
      />
      <ErrorMessage error={replace.error} fields={['accessToken']} />
      {done && <Notice tone="success">Access token replaced.</Notice>}
      <div className="form-actions">
        <button type="submit" disabled={replace.pending}>
          {replace.pending ? 'Replacing…' : 'Replace token'}
        </button>
      </div>
    </form>
  );
}
