import { createContext, useContext, type ReactNode } from 'react';
import { api, seg, type BusinessAccount } from '../api';
import { ErrorMessage, StatusBadge } from '../components';
import { useLoad } from '../hooks';
import { Link, useLocation } from '../router';

const AccountContext = createContext<{ account: BusinessAccount; reload: () => void } | null>(null);

/** The business account of the current page, loaded once by the layout. */
export function useAccount() {
  const value = useContext(AccountContext);
  if (!value) throw new Error('useAccount outside AccountLayout');
  return value;
}

const TABS = [
  { to: '', label: 'Overview' },
  { to: '/messages', label: 'Messages' },
  { to: '/events', label: 'Events' },
  { to: '/analytics', label: 'Analytics' },
  { to: '/campaigns', label: 'Campaigns' },
  { to: '/contacts', label: 'Contacts' },
];

/** Header and tabs shared by the pages of one business account. */
export function AccountLayout({ wabaId, children }: { wabaId: string; children: ReactNode }) {
  const { path } = useLocation();
  const account = useLoad(() => api.get<BusinessAccount>(`/business-accounts/${seg(wabaId)}`), [wabaId]);
  const base = `/accounts/${seg(wabaId)}`;

  if (account.error) return <ErrorMessage error={account.error} />;
  if (!account.data) return <p role="status">Loading the business account…</p>;
  return (
    <AccountContext.Provider value={{ account: account.data, reload: account.reload }}>
      <p className="breadcrumb">
        <Link to="/">Business accounts</Link> / <span>{account.data.name}</span>{' '}
        <StatusBadge status={account.data.status} />
      </p>
      <nav className="tabs" aria-label="Business account">
        <ul>
          {TABS.map((tab) => {
            const to = base + tab.to;
            const current = tab.to === '' ? path === to : path.startsWith(to);
            return (
              <li key={tab.label}>
                <Link to={to} aria-current={current ? 'page' : undefined}>
                  {tab.label}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      {children}
    </AccountContext.Provider>
  );
}
