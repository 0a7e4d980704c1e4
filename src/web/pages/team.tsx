import { useEffect, useRef, useState, type FormEvent } from 'react';
import {
  api,
  seg,
  type CreatedInvitation,
  type Invitation,
  type InviteBody,
  type Member,
  type Operator,
  type OrganizationSettings,
  type Page,
  type PasswordResetLink,
  type Role,
} from '../api';
import { CopyButton, DateTime, ErrorMessage, PageTitle, SelectField, TableRegion, TextField } from '../components';
import { useAction, useLoad } from '../hooks';

/**
 * The organization's team: everyone sees its operators (role, last sign-in); owners invite operators by one-time link,
 * see the pending invitations, change roles, remove operators and issue password-reset links.
 */
export function TeamPage({ operator }: { operator: Operator }) {
  const [created, setCreated] = useState<CreatedInvitation>();
  if (operator.role !== 'owner') {
    return (
      <>
        <PageTitle title="Team">Team</PageTitle>
        <p>
          Only owners of “{operator.organization.name}” can invite operators. Ask an owner for an invitation link for
          your colleague.
        </p>
        <Members operator={operator} />
        <ContentRetention operator={operator} />
      </>
    );
  }
  return (
    <>
      <PageTitle title="Team">Team</PageTitle>
      <p className="muted">
        Invite a colleague into “{operator.organization.name}”: they get a one-time link, valid for 7 days, to sign up
        with their own password.
      </p>
      {created ? (
        <NewInvitation invitation={created} onDone={() => setCreated(undefined)} />
      ) : (
        <InviteForm onCreated={setCreated} />
      )}
      <PendingInvitations key={created?.id ?? 'list'} />
      <Members operator={operator} />
      <ContentRetention operator={operator} />
    </>
  );
}

const forever = (days: number) => (days === 0 ? 'kept forever' : `${days} days`);

/**
 * How long message content is kept (docs/security.md, "Content retention"): everyone sees it, admins and owners
 * change it. Empty follows the service's default; 0 keeps content forever.
 */
function ContentRetention({ operator }: { operator: Operator }) {
  const settings = useLoad(() => api.get<OrganizationSettings>('/organization/settings'), []);
  const [days, setDays] = useState<string>();
  const save = useAction((contentRetentionDays: number | null) =>
    api.patch<OrganizationSettings>('/organization/settings', { contentRetentionDays }),
  );
  const current = settings.data;
  const value = days ?? (current?.contentRetentionDays === null ? '' : String(current?.contentRetentionDays ?? ''));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const saved = await save.run(value.trim() === '' ? null : Number(value));
    if (saved) {
      setDays(undefined);
      settings.reload();
    }
  };
  return (
    <section aria-labelledby="retention-heading" className="card">
      <h2 id="retention-heading">Message content retention</h2>
      <ErrorMessage error={settings.error} />
      {current && (
        <>
          <p className="muted">
            Now: {forever(current.effectiveContentRetentionDays)}
            {current.contentRetentionDays === null ? ' (the service’s default)' : ''}. After that, what messages said
            (their content and the raw webhook payloads) is removed; messages, statuses, pricing and counts stay.
            {current.contentScrubbedThrough && (
              <>
                {' '}
                Removed for everything before <DateTime iso={current.contentScrubbedThrough} />.
              </>
            )}
          </p>
          {operator.role === 'member' ? null : (
            <form onSubmit={(e) => void submit(e)} noValidate className="form-grid">
              <TextField
                label="Days to keep message content"
                name="contentRetentionDays"
                inputMode="numeric"
                hint={`Empty: the service’s default (${forever(current.defaultContentRetentionDays)}); 0: forever`}
                value={value}
                onChange={(e) => setDays(e.target.value)}
                error={save.error?.field('contentRetentionDays')}
              />
              <ErrorMessage error={save.error} fields={['contentRetentionDays']} />
              <div className="form-actions">
                <button type="submit" disabled={save.pending}>
                  {save.pending ? 'Saving…' : 'Save retention'}
                </button>
              </div>
            </form>
          )}
        </>
      )}
    </section>
  );
}

const ROLE_OPTIONS: { value: Role; label: string }[] = [
  { value: 'member', label: 'Member (reads, sends)' },
  { value: 'admin', label: 'Admin (accounts, keys, campaigns, blocked users)' },
  { value: 'owner', label: 'Owner (everything, operators included)' },
];

function Members({ operator }: { operator: Operator }) {
  const members = useLoad(() => api.get<Page<Member>>('/organization/members', { limit: 100 }), []);
  const [link, setLink] = useState<{ email: string; reset: PasswordResetLink }>();
  const owner = operator.role === 'owner';
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Operators</h2>
      {link && <NewResetLink email={link.email} reset={link.reset} onDone={() => setLink(undefined)} />}
      <ErrorMessage error={members.error} />
      {members.data && (
        <TableRegion label="Operators">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Last sign-in</th>
                {owner && <th scope="col">Action</th>}
              </tr>
            </thead>
            <tbody>
              {members.data.items.map((m) => (
                <MemberRow
                  key={m.id}
                  member={m}
                  self={m.id === operator.id}
                  owner={owner}
                  onChanged={members.reload}
                  onLink={(reset) => setLink({ email: m.email, reset })}
                />
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  );
}

function MemberRow({
  member,
  self,
  owner,
  onChanged,
  onLink,
}: {
  member: Member;
  self: boolean;
  owner: boolean;
  onChanged: () => void;
  onLink: (reset: PasswordResetLink) => void;
}) {
  const change = useAction((role: Role) => api.patch<Member>(`/organization/members/${seg(member.id)}`, { role }));
  const remove = useAction(() => api.delete<Member>(`/organization/members/${seg(member.id)}`));
  const reset = useAction(() => api.post<PasswordResetLink>(`/organization/members/${seg(member.id)}/password-reset`));
  return (
    <tr>
      <td>{member.email}</td>
      <td>
        {owner ? (
          <SelectField
            label={`Role of ${member.email}`}
            name="role"
            value={member.role}
            disabled={change.pending}
            onChange={(e) => void change.run(e.target.value as Role).then((done) => done !== undefined && onChanged())}
            options={ROLE_OPTIONS}
            error={change.error?.message}
          />
        ) : (
          member.role
        )}
      </td>
      <td>{member.lastSignInAt ? <DateTime iso={member.lastSignInAt} /> : 'never'}</td>
      {owner && (
        <td>
          {!self && (
            <button
              type="button"
              className="secondary"
              aria-label={`Password-reset link for ${member.email}`}
              disabled={reset.pending}
              onClick={() => void reset.run().then((link) => link && onLink(link))}
            >
              Reset link
            </button>
          )}
          <button
            type="button"
            className="secondary"
            aria-label={`Remove ${member.email}`}
            disabled={remove.pending}
            onClick={() => void remove.run().then((done) => done !== undefined && onChanged())}
          >
            Remove
          </button>
          <ErrorMessage error={remove.error ?? reset.error} />
        </td>
      )}
    </tr>
  );
}

function InviteForm({ onCreated }: { onCreated: (invitation: CreatedInvitation) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const invite = useAction((body: InviteBody) => api.post<CreatedInvitation>('/invitations', body));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const invitation = await invite.run({ email, role });
    if (invitation) {
      setEmail('');
      onCreated(invitation);
    }
  };
  return (
    <section aria-labelledby="invite-heading" className="card">
      <h2 id="invite-heading">Invite an operator</h2>
      <form onSubmit={(e) => void submit(e)} noValidate className="form-grid">
        <TextField
          label="Email"
          type="email"
          name="email"
          autoComplete="off"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={invite.error?.field('email')}
        />
        <SelectField
          label="Role"
          name="role"
          value={role}
          onChange={(e) => setRole(e.target.value as Role)}
          options={ROLE_OPTIONS}
          error={invite.error?.field('role')}
        />
        <ErrorMessage error={invite.error} fields={['email', 'role']} />
        <div className="form-actions">
          <button type="submit" disabled={invite.pending}>
            {invite.pending ? 'Inviting…' : 'Create invitation link'}
          </button>
        </div>
      </form>
    </section>
  );
}

/** The link exists only in this component's state: the service keeps a hash of its token. */
function NewInvitation({ invitation, onDone }: { invitation: CreatedInvitation; onDone: () => void }) {
  return (
    <OneTimeLink
      id="new-invitation"
      heading={`Invitation for ${invitation.email} created`}
      label="Invitation link"
      recipient={invitation.email}
      path={invitation.path}
      expiresAt={invitation.expiresAt}
      onDone={onDone}
    />
  );
}

function NewResetLink({ email, reset, onDone }: { email: string; reset: PasswordResetLink; onDone: () => void }) {
  return (
    <OneTimeLink
      id="new-reset-link"
      heading={`Password-reset link for ${email}`}
      label="Password-reset link"
      recipient={email}
      path={reset.path}
      expiresAt={reset.expiresAt}
      onDone={onDone}
    />
  );
}

/** A one-time link, shown once: it exists only in this component's state (the service keeps a hash of its token). */
function OneTimeLink({
  id,
  heading,
  label,
  recipient,
  path,
  expiresAt,
  onDone,
}: {
  id: string;
  heading: string;
  label: string;
  recipient: string;
  path: string;
  expiresAt: string;
  onDone: () => void;
}) {
  const title = useRef<HTMLHeadingElement>(null);
  useEffect(() => title.current?.focus(), []);
  const link = `${window.location.origin}${path}`;
  return (
    <section aria-labelledby={`${id}-heading`} className="card card-warning" data-testid={id}>
      <h2 id={`${id}-heading`} ref={title} tabIndex={-1}>
        {heading}
      </h2>
      <p className="warning-text">
        <strong>Copy the link now and send it to {recipient}. It is shown only this once</strong> and works once, until{' '}
        <DateTime iso={expiresAt} />.
      </p>
      <div className="secret-row">
        <TextField id={`${id}-link`} label={label} readOnly value={link} className="mono-input" />
        <CopyButton value={link} label={`Copy ${label.toLowerCase()}`} fieldId={`${id}-link`} />
      </div>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </section>
  );
}

function PendingInvitations() {
  const invitations = useLoad(() => api.get<Invitation[]>('/invitations'), []);
  return (
    <section aria-labelledby="invitations-heading">
      <h2 id="invitations-heading">Pending invitations</h2>
      <ErrorMessage error={invitations.error} />
      {invitations.data?.length === 0 && (
        <p className="empty-state">
          No pending invitations. Invite a colleague above: they get a one-time link to sign up into this organization.
        </p>
      )}
      {invitations.data && invitations.data.length > 0 && (
        <TableRegion label="Pending invitations">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Invited by</th>
                <th scope="col">Expires</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {invitations.data.map((i) => (
                <InvitationRow key={i.id} invitation={i} onRevoked={invitations.reload} />
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  );
}

function InvitationRow({ invitation, onRevoked }: { invitation: Invitation; onRevoked: () => void }) {
  const revoke = useAction(() => api.delete<Invitation>(`/invitations/${seg(invitation.id)}`));
  return (
    <tr>
      <td>{invitation.email}</td>
      <td>{invitation.role}</td>
      <td>{invitation.invitedBy}</td>
      <td>
        <DateTime iso={invitation.expiresAt} />
      </td>
      <td>
        <button
          type="button"
          className="secondary"
          aria-label={`Revoke the invitation for ${invitation.email}`}
          disabled={revoke.pending}
          onClick={() => void revoke.run().then((done) => done !== undefined && onRevoked())}
        >
          Revoke
        </button>
        <ErrorMessage error={revoke.error} />
      </td>
    </tr>
  );
}
