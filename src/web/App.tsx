import { useEffect, useState, type ReactNode } from 'react';
import { api, onUnauthorized, type Session } from './api';
import { PageTitle } from './components';
import { AccountLayout } from './pages/account-layout';
import { AccountOverviewPage, AccountsPage } from './pages/accounts';
import { AnalyticsPage } from './pages/analytics';
import { CampaignDetailPage, CampaignsPage } from './pages/campaigns';
import { ContactsPage } from './pages/contacts';
import { LoginPage, ResetPasswordPage, SignupPage } from './pages/auth';
import { EventsPage } from './pages/events';
import { KeysPage } from './pages/keys';
import { MessageDetailPage, MessagesPage } from './pages/messages';
import { QueueHealthPage } from './pages/queue-health';
import { TeamPage } from './pages/team';
import { Link, match, navigate, useLocation } from './router';

const PUBLIC_PATHS = new Set(['/login', '/signup', '/reset-password']);

/** `undefined` while the session is being checked, `null` when signed out. */
type SessionState = Session | null | undefined;

export function App() {
  const { path } = useLocation();
  const [session, setSession] = useState<SessionState>(undefined);

  useEffect(() => {
    api.get<Session>('/auth/me').then(setSession, () => setSession(null));
    return onUnauthorized(() => setSession(null));
  }, []);

  const isPublic = PUBLIC_PATHS.has(path);
  useEffect(() => {
    if (session === null && !isPublic) {
      const here = window.location.pathname + window.location.search;
      navigate(`/login?next=${encodeURIComponent(here)}`, { replace: true });
    }
    if (session && isPublic) navigate('/', { replace: true });
  }, [session, isPublic]);

  if (session === undefined) {
    return (
      <p className="loading-screen" role="status">
        Loading the console…
      </p>
    );
  }
  if (!session) {
    if (!isPublic) return null;
    const page =
      path === '/signup' ? (
        <SignupPage />
      ) : path === '/reset-password' ? (
        <ResetPasswordPage />
      ) : (
        <LoginPage onLogin={setSession} />
      );
    return <AuthLayout>{page}</AuthLayout>;
  }
  return (
    <Shell session={session} onLogout={() => setSession(null)} path={path}>
      {path === '/team' ? <TeamPage operator={session.operator} /> : route(path)}
    </Shell>
  );
}

function route(path: string): ReactNode {
  if (path === '/') return <AccountsPage />;
  if (path === '/keys') return <KeysPage />;
  if (path === '/queue-health') return <QueueHealthPage />;
  const accountPages: Array<[string, (wabaId: string, params: Record<string, string>) => ReactNode]> = [
    ['/accounts/:wabaId', (wabaId) => <AccountOverviewPage wabaId={wabaId} />],
    ['/accounts/:wabaId/messages', (wabaId) => <MessagesPage wabaId={wabaId} />],
    ['/accounts/:wabaId/messages/:id', (wabaId, p) => <MessageDetailPage wabaId={wabaId} id={p.id!} />],
    ['/accounts/:wabaId/events', (wabaId) => <EventsPage wabaId={wabaId} />],
    ['/accounts/:wabaId/analytics', (wabaId) => <AnalyticsPage wabaId={wabaId} />],
    ['/accounts/:wabaId/campaigns', (wabaId) => <CampaignsPage wabaId={wabaId} />],
    ['/accounts/:wabaId/campaigns/:id', (wabaId, p) => <CampaignDetailPage wabaId={wabaId} id={p.id!} />],
    ['/accounts/:wabaId/contacts', (wabaId) => <ContactsPage wabaId={wabaId} />],
  ];
  for (const [pattern, render] of accountPages) {
    const params = match(pattern, path);
    if (params) return <AccountLayout wabaId={params.wabaId!}>{render(params.wabaId!, params)}</AccountLayout>;
  }
  return (
    <>
      <PageTitle title="Not found">Page not found</PageTitle>
      <p>
        There is no console page at this address. <Link to="/">Go to your business accounts</Link>.
      </p>
    </>
  );
}

function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <div className="auth-layout">
      <p className="brand">Business Messaging console</p>
      <main id="main" className="auth-card" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function Shell({
  session,
  onLogout,
  path,
  children,
}: {
  session: Session;
  onLogout: () => void;
  path: string;
  children: ReactNode;
}) {
  const [loggingOut, setLoggingOut] = useState(false);
  const logout = async () => {
    setLoggingOut(true);
    await api.post('/auth/logout').catch(() => undefined);
    setLoggingOut(false);
    onLogout();
    navigate('/login', { replace: true, state: { notice: 'You are logged out.' } });
  };
  const current = (to: string) =>
    (to === '/' ? path === '/' || path.startsWith('/accounts') : path.startsWith(to)) ? 'page' : undefined;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="header-inner">
          <Link to="/" className="brand">
            Business Messaging console
          </Link>
          <nav aria-label="Main">
            <ul>
              <li>
                <Link to="/" aria-current={current('/')}>
                  Business accounts
                </Link>
              </li>
              <li>
                <Link to="/keys" aria-current={current('/keys')}>
                  API keys
                </Link>
              </li>
              <li>
                <Link to="/team" aria-current={current('/team')}>
                  Team
                </Link>
              </li>
              <li>
                {/* The organization's own backlog; the shared queues (Bull Board, /console/queues) are for platform administrators. */}
                <Link to="/queue-health" aria-current={current('/queue-health')}>
                  Queue health
                </Link>
              </li>
            </ul>
          </nav>
          <div className="account-menu">
            <span className="who">
              {session.operator.email}
              <span className="org"> · {session.operator.organization.name}</span>
            </span>
            <button type="button" className="secondary" onClick={() => void logout()} disabled={loggingOut}>
              Log out
            </button>
          </div>
        </div>
      </header>
      <main id="main" className="content" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
