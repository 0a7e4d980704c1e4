import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiFailure } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiFailure | undefined;
  loading: boolean;
  /** When the data last arrived. */
  updatedAt: Date | undefined;
  reload: () => void;
}

/**
 * Loads data when `deps` change and, with `pollMs`, again on that interval while the tab is visible. The
 * previous data stays on screen during a reload (no flicker while polling), and an answer that arrives
 * after a newer request was made is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], opts: { pollMs?: number } = {}): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiFailure>();
  const [loading, setLoading] = useState(true);
  const [updatedAt, setUpdatedAt] = useState<Date>();
  const latest = useRef(0);
  const loader = useRef(load);
  loader.current = load;

  const run = useCallback(() => {
    const ticket = ++latest.current;
    setLoading(true);
    loader.current().then(
      (value) => {
        if (ticket !== latest.current) return;
        setData(value);
        setError(undefined);
        setUpdatedAt(new Date());
        setLoading(false);
      },
      (err: unknown) => {
        if (ticket !== latest.current) return;
        setError(err instanceof ApiFailure ? err : new ApiFailure(0, String(err)));
        setLoading(false);
      },
    );
  }, []);

  // The caller's deps decide when to load again, as with useEffect; `load` itself is read fresh each time.
  useEffect(run, deps);

  useEffect(() => {
    if (!opts.pollMs) return;
    const timer = window.setInterval(() => {
      if (!document.hidden) run();
    }, opts.pollMs);
    return () => window.clearInterval(timer);
  }, [opts.pollMs, run]);

  return { data, error, loading, updatedAt, reload: run };
}

/** Runs an action (a form submit, a button) with its pending state and failure. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiFailure>();
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setPending(true);
      setError(undefined);
      try {
        return await action(...args);
      } catch (err) {
        setError(err instanceof ApiFailure ? err : new ApiFailure(0, String(err)));
        return undefined;
      } finally {
        setPending(false);
      }
    },
    [action],
  );
  return { run, pending, error };
}
