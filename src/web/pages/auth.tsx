import { useState, type FormEvent } from 'react';
import { api, type LoginBody, type Operator, type ResetPasswordBody, type Session, type SignupBody } from '../api';
import { ErrorMessage, Notice, PageTitle, TextField } from '../components';
import { useAction } from '../hooks';
import { BASE, Link, navigate, useLocation } from '../router';

/** Where to go after logging in: only a console page of this origin (never an open redirect). */
function safeNext(next: string | null): string | null {
  if (!next || !next.startsWith(`${BASE}/`) || next.startsWith('//') || next.includes('\\')) return null;
  return next;
}

export function LoginPage({ onLogin }: { onLogin: (session: Session) => void }) {
  const { search } = useLocation();
  const state = (window.history.state ?? {}) as { notice?: string; email?: string };
  const [email, setEmail] = useState(state.email ?? '');
  const [password, setPassword] = useState('');
  const login = useAction((body: LoginBody) => api.post<Session>('/auth/login', body));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const session = await login.run({ email, password });
    if (!session) return;
    const next = safeNext(search.get('next'));
    // Bull Board lives outside the app: a full page load takes the user back there.
    if (next?.startsWith(`${BASE}/queues`)) {
      window.location.assign(next);
      return;
    }
    onLogin(session);
    navigate(next ? next.slice(BASE.length) || '/' : '/', { replace: true });
  };

  return (
    <>
      <PageTitle title="Log in">Log in</PageTitle>
      {state.notice && <Notice tone="success">{state.notice}</Notice>}
      <form onSubmit={(e) => void submit(e)} noValidate>
        <TextField
          label="Email"
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={login.error?.field('email')}
        />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={login.error?.field('password')}
        />
        <ErrorMessage error={login.error} fields={['email', 'password']} />
        <button type="submit" disabled={login.pending}>
          {login.pending ? 'Logging in…' : 'Log in'}
        </button>
      </form>
      <p className="alt-action">
        New here? <Link to="/signup">Create an organization</Link>
      </p>
    </>
  );
}

/** Sign up: a new organization, or with `?invite=<token>` (an owner's invitation link) joining theirs. */
export function SignupPage() {
  const inviteToken = useLocation().search.get('invite') ?? undefined;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [organizationName, setOrganizationName] = useState('');
  const signup = useAction((body: SignupBody) => api.post<Operator>('/auth/signup', body));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const operator = await signup.run(
      inviteToken ? { email, password, inviteToken } : { email, password, organizationName },
    );
    if (!operator) return;
    const notice = inviteToken
      ? `You joined “${operator.organization.name}”.`
      : `Organization “${operator.organization.name}” created.`;
    navigate('/login', { state: { email: operator.email, notice: `${notice} Log in to continue.` } });
  };

  // An inviteToken error (used, expired) has no field on screen: ErrorMessage lists it.
  const fields = inviteToken ? ['email', 'password'] : ['email', 'password', 'organizationName'];
  return (
    <>
      <PageTitle title="Sign up">{inviteToken ? 'Join your team' : 'Create an organization'}</PageTitle>
      {inviteToken && <p className="muted">Sign up with the email address the invitation was sent to.</p>}
      <form onSubmit={(e) => void submit(e)} noValidate>
        {!inviteToken && (
          <TextField
            label="Organization name"
            name="organizationName"
            autoComplete="organization"
            required
            value={organizationName}
            onChange={(e) => setOrganizationName(e.target.value)}
            error={signup.error?.field('organizationName')}
          />
        )}
        <TextField
          label="Email"
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={signup.error?.field('email')}
        />
        <NewPasswordField
          label="Password"
          name="password"
          value={password}
          onChange={setPassword}
          error={signup.error?.field('password')}
        />
        <ErrorMessage error={signup.error} fields={fields} />
        <button type="submit" disabled={signup.pending}>
          {signup.pending ? 'Creating…' : 'Sign up'}
        </button>
      </form>
      <p className="alt-action">
        Already have an account? <Link to="/login">Log in</Link>
      </p>
    </>
  );
}

/** A one-time password-reset link an owner issued (`/console/reset-password?token=…`): the operator sets a new password. */
export function ResetPasswordPage() {
  const token = useLocation().search.get('token') ?? '';
  const [newPassword, setNewPassword] = useState('');
  const reset = useAction((body: ResetPasswordBody) =>
    api.post<{ sessionsEnded: number }>('/auth/password-reset', body),
  );

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!(await reset.run({ token, newPassword }))) return;
    navigate('/login', {
      state: { notice: 'Your new password is set, and every session you had was ended. Log in with it.' },
    });
  };

  return (
    <>
      <PageTitle title="Set a new password">Set a new password</PageTitle>
      <p className="muted">This link works once. An owner of your organization can issue a new one.</p>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <NewPasswordField
          label="New password"
          name="newPassword"
          value={newPassword}
          onChange={setNewPassword}
          error={reset.error?.field('newPassword')}
        />
        <ErrorMessage error={reset.error} fields={['newPassword']} />
        <button type="submit" disabled={reset.pending}>
          {reset.pending ? 'Saving…' : 'Set password'}
        </button>
      </form>
      <p className="alt-action">
        <Link to="/login">Log in</Link>
      </p>
    </>
  );
}

function NewPasswordField({
  label,
  name,
  value,
  onChange,
  error,
}: {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  error: string | undefined;
}) {
  return (
    <TextField
      label={label}
      type="password"
      name={name}
      autoComplete="new-password"
      required
      minLength={10}
      hint="At least 10 characters."
      value={value}
      onChange={(e) => onChange(e.target.value)}
      error={error}
    />
  );
}
