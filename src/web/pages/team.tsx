import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, seg, type CreatedInvitation, type Invitation, type InviteBody, type Operator } from '../api';
import { CopyButton, DateTime, ErrorMessage, PageTitle, SelectField, TableRegion, TextField } from '../components';
import { useAction, useLoad } from '../hooks';

/** The organization's team: owners invite operators by one-time link and see the pending invitations. */
export function TeamPage({ operator }: { operator: Operator }) {
  const [created, setCreated] = useState<CreatedInvitation>();
  if (operator.role !== 'owner') {
    return (
      <>
        <PageTitle title="Team">Team</PageTitle>
        <p>Only owners of “{operator.organization.name}” can invite operators. Ask an owner for an invitation link for your colleague.</p>
      </>
    );
  }
  return (
    <>
      <PageTitle title="Team">Team</PageTitle>
      <p className="muted">Invite a colleague into “{operator.organization.name}”: they get a one-time link, valid for 7 days, to sign up with their own password.</p>
      {created ? <NewInvitation invitation={created} onDone={() => setCreated(undefined)} /> : <InviteForm onCreated={setCreated} />}
      <PendingInvitations key={created?.id ?? 'list'} />
    </>
  );
}

function InviteForm({ onCreated }: { onCreated: (invitation: CreatedInvitation) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'owner'>('member');
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
      <form onSubmit={submit} noValidate className="form-grid">
        <TextField label="Email" type="email" name="email" autoComplete="off" required value={email} onChange={(e) => setEmail(e.target.value)} error={invite.error?.field('email')} />
        <SelectField
          label="Role"
          name="role"
          value={role}
          onChange={(e) => setRole(e.target.value as 'member' | 'owner')}
          options={[
            { value: 'member', label: 'Member' },
            { value: 'owner', label: 'Owner (may invite others)' },
          ]}
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
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const link = `${window.location.origin}${invitation.path}`;
  return (
    <section aria-labelledby="new-invitation-heading" className="card card-warning" data-testid="new-invitation">
      <h2 id="new-invitation-heading" ref={heading} tabIndex={-1}>
        Invitation for {invitation.email} created
      </h2>
      <p className="warning-text">
        <strong>Copy the link now and send it to {invitation.email}. It is shown only this once</strong> and works once, until <DateTime iso={invitation.expiresAt} />.
      </p>
      <div className="secret-row">
        <TextField id="new-invitation-link" label="Invitation link" readOnly value={link} className="mono-input" />
        <CopyButton value={link} label="Copy invitation link" fieldId="new-invitation-link" />
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
      {invitations.data?.length === 0 && <p className="empty-state">No pending invitations. Invite a colleague above: they get a one-time link to sign up into this organization.</p>}
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
        <button type="button" className="secondary" aria-label={`Revoke the invitation for ${invitation.email}`} disabled={revoke.pending} onClick={async () => (await revoke.run()) !== undefined && onRevoked()}>
          Revoke
        </button>
        <ErrorMessage error={revoke.error} />
      </td>
    </tr>
  );
}
