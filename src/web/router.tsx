import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/**
 * A few lines of history-API routing instead of a router package: the console has a handful of flat routes.
 * Paths inside the app are written without the /console prefix, which the server mounts the app under.
 */
export const BASE = '/console';

const listeners = new Set<() => void>();
let navigatedInApp = false;

function subscribe(listener: () => void) {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

export function navigate(to: string, opts: { replace?: boolean; state?: unknown } = {}): void {
  navigatedInApp = true;
  const url = BASE + (to === '/' ? '' : to);
  if (opts.replace) window.history.replaceState(opts.state ?? null, '', url || BASE);
  else window.history.pushState(opts.state ?? null, '', url || BASE);
  listeners.forEach((l) => l());
}

/** Whether the user has moved within the app (then a new page takes focus, as a full page load would). */
export const hasNavigated = () => navigatedInApp;

export function useLocation(): { path: string; search: URLSearchParams } {
  const current = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(current, window.location.origin);
  let path = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : url.pathname;
  if (path === '' || path === '/') path = '/';
  else path = path.replace(/\/+$/, '');
  return { path, search: url.searchParams };
}

/** Replaces the query string of the current page (filters, page number), keeping history usable. */
export function setQuery(
  path: string,
  query: Record<string, string | number | undefined>,
  opts: { replace?: boolean } = {},
): void {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(key, String(value));
  const qs = params.toString();
  navigate(qs ? `${path}?${qs}` : path, opts);
}

/** `/accounts/:wabaId/messages/:id` against a path: the named segments, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** A real link (open in a new tab works), followed inside the app on a plain click. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={BASE + (to === '/' ? '' : to)} onClick={handle} {...rest} />;
}
