import { useState, type FormEvent } from 'react';
import {
  api,
  seg,
  withQuery,
  type BlockedUser,
  type BlockUsersBody,
  type BlockUsersResult,
  type MarketingMessages,
  type MarketingPreference,
  type Page,
  type PhoneNumber,
} from '../api';
import {
  DateTime,
  ErrorMessage,
  Notice,
  Pagination,
  SelectField,
  StatusBadge,
  TableRegion,
  TextField,
} from '../components';
import { useAction, useLoad } from '../hooks';

/** Where the account's MARKETING templates go: the Marketing Messages API once Meta onboarded the account. */
export function MarketingMessagesSection({ state }: { state: MarketingMessages }) {
  return (
    <section aria-labelledby="mm-heading" className="card" data-testid="marketing-messages">
      <h2 id="mm-heading">Marketing Messages API</h2>
      <p>
        {state.onboarded
          ? 'Onboarded: MARKETING templates are sent through the Marketing Messages API (POST /marketing_messages); other categories through the Cloud API.'
          : 'Not onboarded: MARKETING templates are sent through the Cloud API. Accept the Marketing Messages API terms in Meta Business Manager to switch.'}
      </p>
      <dl className="facts">
        <div>
          <dt>Onboarding status</dt>
          <dd>
            <StatusBadge status={state.status} />
          </dd>
        </div>
        <div>
          <dt>Last learnt</dt>
          <dd>
            <DateTime iso={state.updatedAt} fallback="never" />
          </dd>
        </div>
      </dl>
    </section>
  );
}

/** Users who stopped (or resumed) marketing messages: MARKETING templates to a stopped user are refused. */
export function MarketingPreferencesSection({ wabaId }: { wabaId: string }) {
  const [page, setPage] = useState(1);
  const list = useLoad(
    () =>
      api.get<Page<MarketingPreference>>(
        withQuery(`/business-accounts/${seg(wabaId)}/marketing-preferences`, { page, limit: 20 }),
      ),
    [wabaId, page],
  );
  const items = list.data?.items ?? [];
  return (
    <section aria-labelledby="prefs-heading" className="card" data-testid="marketing-preferences">
      <h2 id="prefs-heading">Marketing preferences</h2>
      <p className="muted">
        From Meta's user_preferences webhook (or its 131050 failure). A user whose latest choice is stop gets no
        MARKETING template; utility and authentication templates still go.
      </p>
      <ErrorMessage error={list.error} />
      {list.data && items.length === 0 && <p className="muted">No user has stopped or resumed marketing messages.</p>}
      {items.length > 0 && (
        <TableRegion label="Marketing preferences">
          <table>
            <caption className="visually-hidden">Marketing preferences per user</caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Preference</th>
                <th scope="col">Source</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {items.map((p) => (
                <tr key={p.user}>
                  <td className="mono">{p.user}</td>
                  <td>
                    <StatusBadge status={p.value} />
                  </td>
                  <td>{p.source === 'error_131050' ? 'Meta error 131050' : 'User preference'}</td>
                  <td>
                    <DateTime iso={p.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      {list.data && list.data.totalPages > 1 && (
        <Pagination
          page={page}
          totalPages={list.data.totalPages}
          total={list.data.total}
          onPage={setPage}
          label="Marketing preferences pages"
        />
      )}
    </section>
  );
}

/** Users blocked on a number: block (Meta first: only users who wrote in the last 24 h), list, unblock. */
export function BlockedUsersSection({
  wabaId,
  numbers,
  disabled,
}: {
  wabaId: string;
  numbers: PhoneNumber[];
  disabled: boolean;
}) {
  const [chosen, setChosen] = useState('');
  const phoneNumberId = chosen || numbers[0]?.phoneNumberId || '';
  const [users, setUsers] = useState('');
  const [result, setResult] = useState<BlockUsersResult>();
  const base = `/business-accounts/${seg(wabaId)}/phone-numbers/${seg(phoneNumberId)}/blocked-users`;
  const list = useLoad(
    () => (phoneNumberId ? api.get<Page<BlockedUser>>(withQuery(base, { limit: 100 })) : Promise.resolve(undefined)),
    [base],
  );
  const block = useAction((body: BlockUsersBody) => api.post<BlockUsersResult>(base, body));
  const unblock = useAction((user: string) => api.delete<unknown>(`${base}/${seg(user)}`));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setResult(undefined);
    const done = await block.run({ users: users.split(/[\s,]+/).filter(Boolean) });
    if (done) {
      setResult(done);
      setUsers('');
      list.reload();
    }
  };
  const remove = async (user: string) => {
    if ((await unblock.run(user)) !== undefined) list.reload();
  };

  if (numbers.length === 0) return null;
  return (
    <section aria-labelledby="blocked-heading" className="card" data-testid="blocked-users">
      <h2 id="blocked-heading">Blocked users</h2>
      <p className="muted">
        A blocked user cannot message the number, and sends to them are refused. Only users who wrote to the number in
        the last 24 hours can be blocked.
      </p>
      {numbers.length > 1 && (
        <SelectField
          label="Phone number"
          value={phoneNumberId}
          onChange={(e) => setChosen(e.target.value)}
          options={numbers.map((n) => ({
            value: n.phoneNumberId,
            label: `${n.displayPhoneNumber} (${n.phoneNumberId})`,
          }))}
        />
      )}
      <form onSubmit={(e) => void submit(e)} className="inline-form">
        <TextField
          label="Users to block"
          hint="Phone numbers (digits) or user ids, separated by commas"
          value={users}
          onChange={(e) => setUsers(e.target.value)}
          error={block.error?.field('users')}
          required
        />
        <button type="submit" disabled={block.pending || disabled}>
          {block.pending ? 'Blocking…' : 'Block'}
        </button>
      </form>
      <ErrorMessage error={block.error} fields={['users']} />
      <ErrorMessage error={unblock.error} />
      {result && result.failed.length > 0 && (
        <Notice tone="warning">Not blocked: {result.failed.map((f) => `${f.user} (${f.message})`).join('; ')}</Notice>
      )}
      {result && result.blocked.length > 0 && (
        <Notice tone="success">Blocked: {result.blocked.map((b) => b.user).join(', ')}</Notice>
      )}
      <ErrorMessage error={list.error} />
      {list.data && list.data.items.length === 0 && <p className="muted">Nobody is blocked on this number.</p>}
      {list.data && list.data.items.length > 0 && (
        <TableRegion label="Blocked users">
          <table>
            <caption className="visually-hidden">Users blocked on {phoneNumberId}</caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">WhatsApp id</th>
                <th scope="col">Blocked</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((b) => (
                <tr key={b.user}>
                  <td className="mono">{b.user}</td>
                  <td className="mono">{b.waId ?? '—'}</td>
                  <td>
                    <DateTime iso={b.createdAt} />
                  </td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => void remove(b.user)}
                      disabled={unblock.pending || disabled}
                    >
                      Unblock
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  );
}
