import { useState, type ChangeEvent, type FormEvent } from 'react';
import {
  api,
  seg,
  type Campaign,
  type CampaignRecipient,
  type CreateCampaignBody,
  type Page,
  type PhoneNumber,
  type Template,
} from '../api';
import {
  DateTime,
  ErrorMessage,
  Notice,
  PageTitle,
  Pagination,
  SelectField,
  StatusBadge,
  TableRegion,
  TextField,
  percent,
} from '../components';
import { useAction, useLoad } from '../hooks';
import { Link, navigate, setQuery, useLocation } from '../router';

const MAX_RECIPIENTS = 100_000;

/**
 * Recipients from a CSV file: one recipient per line, the first column a phone number (any `+`, spaces or dashes
 * are dropped) or a business-scoped user id (`US.…`), the other columns the template's body parameters in order. A
 * first line whose first cell is not a number or user id (a header) is skipped.
 */
export function parseRecipientsCsv(text: string): CreateCampaignBody['recipients'] {
  const rows = text
    .split(/\r?\n/)
    .map((line) => line.split(',').map((cell) => cell.trim().replace(/^"(.*)"$/, '$1')))
    .filter((cells) => cells.length > 0 && cells[0] !== '');
  const address = (cell: string) =>
    /^[A-Za-z]{2}\./.test(cell) ? { userId: cell } : { to: cell.replace(/[\s+()-]/g, '') };
  const isAddress = (cell: string) => /^[A-Za-z]{2}\./.test(cell) || /^[+\d][\d\s()-]*$/.test(cell);
  const body = rows.length > 0 && !isAddress(rows[0]![0]!) ? rows.slice(1) : rows;
  return body.map(([first, ...params]) => ({
    ...address(first!),
    ...(params.length > 0
      ? { components: [{ type: 'body', parameters: params.map((text) => ({ type: 'text', text })) }] }
      : {}),
  }));
}

/** The account's campaigns, and a form to start one from a CSV file. */
export function CampaignsPage({ wabaId }: { wabaId: string }) {
  const { search } = useLocation();
  const page = Number(search.get('page')) || 1;
  const base = `/business-accounts/${seg(wabaId)}/campaigns`;
  const campaigns = useLoad(() => api.get<Page<Campaign>>(base, { page, limit: 20 }), [wabaId, page], { pollMs: 5000 });
  return (
    <>
      <PageTitle title="Campaigns">Campaigns</PageTitle>
      <p className="muted">
        One approved template to many recipients, sent at the phone number's throughput (STANDARD 80/s, HIGH 1,000/s),
        each recipient once.
      </p>
      <NewCampaign wabaId={wabaId} onCreated={(c) => navigate(`/accounts/${seg(wabaId)}/campaigns/${c.id}`)} />
      <section aria-labelledby="campaigns-heading">
        <h2 id="campaigns-heading">Campaigns</h2>
        <ErrorMessage error={campaigns.error} />
        {campaigns.data && campaigns.data.total === 0 && <p>No campaigns yet.</p>}
        {campaigns.data && campaigns.data.total > 0 && (
          <>
            <TableRegion label="Campaigns">
              <table>
                <caption className="visually-hidden">Campaigns of this business account, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Template</th>
                    <th scope="col">Recipients</th>
                    <th scope="col">Status</th>
                    <th scope="col">Started</th>
                  </tr>
                </thead>
                <tbody>
                  {campaigns.data.items.map((c) => (
                    <tr key={c.id}>
                      <td>
                        <Link to={`/accounts/${seg(wabaId)}/campaigns/${c.id}`}>{c.name}</Link>
                      </td>
                      <td className="mono">
                        {c.templateName} ({c.templateLanguage})
                      </td>
                      <td>{c.total.toLocaleString('en')}</td>
                      <td>
                        <StatusBadge status={c.status} />
                      </td>
                      <td>
                        <DateTime iso={c.createdAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
            <Pagination
              label="Campaigns"
              page={campaigns.data.page}
              totalPages={campaigns.data.totalPages}
              total={campaigns.data.total}
              onPage={(p) => setQuery(`/accounts/${seg(wabaId)}/campaigns`, { page: p })}
            />
          </>
        )}
      </section>
    </>
  );
}

function NewCampaign({ wabaId, onCreated }: { wabaId: string; onCreated: (c: Campaign) => void }) {
  const base = `/business-accounts/${seg(wabaId)}`;
  // Both lists are pages (as on the account page): the first 100 numbers and APPROVED templates.
  const numbers = useLoad(() => api.get<Page<PhoneNumber>>(`${base}/phone-numbers`, { page: 1, limit: 100 }), [wabaId]);
  const templates = useLoad(
    () => api.get<Page<Template>>(`${base}/templates`, { status: 'APPROVED', page: 1, limit: 100 }),
    [wabaId],
  );
  const [name, setName] = useState('');
  const [phoneNumberId, setPhoneNumberId] = useState('');
  const [template, setTemplate] = useState('');
  const [recipients, setRecipients] = useState<CreateCampaignBody['recipients']>([]);
  const [fileNote, setFileNote] = useState<string>();
  const create = useAction((body: CreateCampaignBody) => api.post<Campaign>(`${base}/campaigns`, body));
  const connected = (numbers.data?.items ?? []).filter((n) => n.status === 'CONNECTED');
  const approved = templates.data?.items ?? [];
  const number = phoneNumberId || connected[0]?.phoneNumberId || '';
  const chosen = approved.find((t) => `${t.name}|${t.language}` === template) ?? approved[0];

  const readFile = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    if (!file) return;
    const parsed = parseRecipientsCsv(await file.text());
    setRecipients(parsed);
    setFileNote(
      parsed.length > MAX_RECIPIENTS
        ? `${parsed.length.toLocaleString('en')} recipients: at most ${MAX_RECIPIENTS.toLocaleString('en')} per campaign.`
        : `${parsed.length.toLocaleString('en')} recipients read from ${file.name}.`,
    );
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!chosen) return;
    const created = await create.run({
      name: name.trim(),
      phoneNumberId: number,
      templateName: chosen.name,
      templateLanguage: chosen.language,
      recipients,
    });
    if (created) onCreated(created);
  };

  return (
    <section aria-labelledby="new-campaign-heading" className="card">
      <h2 id="new-campaign-heading">Start a campaign</h2>
      {connected.length === 0 || approved.length === 0 ? (
        <p>
          Sync the account's phone numbers and templates first: a campaign needs a CONNECTED number and an APPROVED
          template.
        </p>
      ) : (
        <form onSubmit={(e) => void submit(e)} noValidate className="form-grid">
          <TextField
            label="Name"
            name="name"
            required
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={create.error?.field('name')}
          />
          <SelectField
            label="Phone number"
            name="phoneNumberId"
            value={number}
            onChange={(e) => setPhoneNumberId(e.target.value)}
            options={connected.map((n) => ({
              value: n.phoneNumberId,
              label: `${n.displayPhoneNumber} (${n.throughputLevel ?? 'STANDARD'})`,
            }))}
            error={create.error?.field('phoneNumberId')}
          />
          <SelectField
            label="Template"
            name="template"
            value={chosen ? `${chosen.name}|${chosen.language}` : ''}
            onChange={(e) => setTemplate(e.target.value)}
            options={approved.map((t) => ({
              value: `${t.name}|${t.language}`,
              label: `${t.name} (${t.language}, ${t.category ?? 'no category'})`,
            }))}
            error={create.error?.field('templateName') ?? create.error?.field('templateLanguage')}
          />
          <div className="field">
            <label htmlFor="recipients-file">Recipients (CSV)</label>
            <p className="hint" id="recipients-file-hint">
              One per line: a phone number or user id, then the template's body parameters in order. A header line is
              skipped.
            </p>
            <input
              id="recipients-file"
              name="recipients"
              type="file"
              accept=".csv,text/csv,text/plain"
              aria-describedby="recipients-file-hint"
              onChange={(e) => void readFile(e)}
            />
            {fileNote && <p role="status">{fileNote}</p>}
          </div>
          <ErrorMessage error={create.error} fields={['name', 'phoneNumberId', 'templateName', 'templateLanguage']} />
          <div className="form-actions">
            <button type="submit" disabled={create.pending || recipients.length === 0}>
              {create.pending
                ? 'Starting…'
                : `Start campaign${recipients.length > 0 ? ` to ${recipients.length.toLocaleString('en')}` : ''}`}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

const COUNT_LABELS: Array<[keyof NonNullable<Campaign['counts']>, string]> = [
  ['pending', 'Pending'],
  ['sending', 'Sending'],
  ['sent', 'Sent'],
  ['delivered', 'Delivered'],
  ['read', 'Read'],
  ['failed', 'Failed'],
  ['skipped', 'Skipped'],
  ['cancelled', 'Cancelled'],
];

/** One campaign: live progress and counts, its controls, and the recipients that failed or were skipped, with why. */
export function CampaignDetailPage({ wabaId, id }: { wabaId: string; id: string }) {
  const base = `/business-accounts/${seg(wabaId)}/campaigns/${seg(id)}`;
  const campaign = useLoad(() => api.get<Campaign>(base), [base], { pollMs: 2000 });
  const [show, setShow] = useState<'failed' | 'skipped'>('failed');
  const [page, setPage] = useState(1);
  const recipients = useLoad(
    () => api.get<Page<CampaignRecipient>>(`${base}/recipients`, { status: show, page, limit: 50 }),
    [base, show, page],
    { pollMs: 5000 },
  );
  const action = useAction((what: 'pause' | 'resume' | 'cancel' | 'retry-failed') =>
    api.post<Campaign>(`${base}/${what}`),
  );
  const act = async (what: 'pause' | 'resume' | 'cancel' | 'retry-failed') => {
    if (await action.run(what)) {
      campaign.reload();
      recipients.reload();
    }
  };
  const c = campaign.data;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`/accounts/${seg(wabaId)}/campaigns`}>Campaigns</Link> / <span>{c?.name ?? id}</span>
      </p>
      <PageTitle title={c ? `Campaign ${c.name}` : 'Campaign'}>{c ? c.name : 'Campaign'}</PageTitle>
      <ErrorMessage error={campaign.error} />
      {c && (
        <>
          <p>
            <StatusBadge status={c.status} /> {c.templateName} ({c.templateLanguage}) from {c.phoneNumberId} ·{' '}
            {c.total.toLocaleString('en')} recipients · started <DateTime iso={c.createdAt} />
            {c.completedAt && (
              <>
                {' '}
                · ended <DateTime iso={c.completedAt} />
              </>
            )}
          </p>
          {c.statusReason && <Notice tone="warning">{c.statusReason}</Notice>}
          <div className="field">
            <label htmlFor="campaign-progress">Progress: {percent(c.progress ?? 0)}</label>
            <progress id="campaign-progress" className="progress-bar" max={1} value={c.progress ?? 0} />
          </div>
          {c.counts && (
            <dl className="counts" aria-label="Recipients by status">
              {COUNT_LABELS.map(([key, label]) => (
                <div key={key}>
                  <dt>{label}</dt>
                  <dd>{c.counts![key].toLocaleString('en')}</dd>
                </div>
              ))}
            </dl>
          )}
          <div className="form-actions">
            {c.status === 'running' && (
              <button type="button" className="secondary" onClick={() => void act('pause')} disabled={action.pending}>
                Pause
              </button>
            )}
            {c.status === 'paused' && (
              <button type="button" onClick={() => void act('resume')} disabled={action.pending}>
                Resume
              </button>
            )}
            {(c.status === 'running' || c.status === 'paused') && (
              <button type="button" className="danger" onClick={() => void act('cancel')} disabled={action.pending}>
                Cancel campaign
              </button>
            )}
            {c.status !== 'cancelled' && (c.counts?.failed ?? 0) > 0 && (
              <button
                type="button"
                className="secondary"
                onClick={() => void act('retry-failed')}
                disabled={action.pending}
              >
                Retry {c.counts!.failed.toLocaleString('en')} failed
              </button>
            )}
          </div>
          <ErrorMessage error={action.error} />
        </>
      )}
      <section aria-labelledby="recipients-heading">
        <h2 id="recipients-heading">{show === 'failed' ? 'Failed recipients' : 'Skipped recipients'}</h2>
        <SelectField
          label="Show"
          name="show"
          value={show}
          onChange={(e) => {
            setShow(e.target.value as 'failed' | 'skipped');
            setPage(1);
          }}
          options={[
            { value: 'failed', label: 'Failed, with the reason' },
            { value: 'skipped', label: 'Skipped, with the reason' },
          ]}
        />
        <ErrorMessage error={recipients.error} />
        {recipients.data && recipients.data.total === 0 && <p>None.</p>}
        {recipients.data && recipients.data.total > 0 && (
          <>
            <TableRegion label="Recipients">
              <table>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Recipient</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Reason</th>
                  </tr>
                </thead>
                <tbody>
                  {recipients.data.items.map((r) => (
                    <tr key={r.position}>
                      <td>{r.position + 1}</td>
                      <td className="mono">{r.to ?? r.userId}</td>
                      <td>{r.attempts}</td>
                      <td>
                        {r.skipReason ??
                          (r.error
                            ? `${r.error.title ?? 'Failed'}${r.error.code !== null ? ` (${r.error.code})` : ''}${r.error.detail ? `: ${r.error.detail}` : ''}`
                            : '—')}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
            <Pagination
              label="Recipients"
              page={recipients.data.page}
              totalPages={recipients.data.totalPages}
              total={recipients.data.total}
              onPage={setPage}
            />
          </>
        )}
      </section>
    </>
  );
}
