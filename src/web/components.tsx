import {
  useEffect,
  useId,
  useRef,
  useState,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
} from 'react';
import type { ApiFailure } from './api';
import { hasNavigated } from './router';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const time = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

export const formatDateTime = (iso: string) => dateTime.format(new Date(iso));
export const formatTime = (date: Date) => time.format(date);
export const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;
/** A rate of `total` messages: "—" when there is nothing to rate (0 of 0 is no 0.0 %). */
export const rateOf = (fraction: number, total: number) => (total === 0 ? '—' : percent(fraction));

export function DateTime({ iso, fallback = '—' }: { iso: string | null | undefined; fallback?: string }) {
  if (!iso) return <>{fallback}</>;
  return <time dateTime={iso}>{formatDateTime(iso)}</time>;
}

/**
 * The page heading. It sets the document title and, after an in-app navigation, takes focus so that screen
 * readers announce the new page and keyboard users start from its top.
 */
export function PageTitle({ children, title }: { children: ReactNode; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Business Messaging console`;
    if (hasNavigated()) ref.current?.focus();
  }, [title]);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

type InputProps = InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string; hint?: string };

/** A labelled input; a field error is tied to it with aria-describedby and aria-invalid. */
export function TextField({ label, error, hint, id, className, ...input }: InputProps) {
  const autoId = useId();
  const inputId = id ?? autoId;
  const describedBy = [hint && `${inputId}-hint`, error && `${inputId}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={inputId}>{label}</label>
      {hint && (
        <p className="hint" id={`${inputId}-hint`}>
          {hint}
        </p>
      )}
      <input id={inputId} aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
      {error && (
        <p className="field-error" id={`${inputId}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

type SelectProps = SelectHTMLAttributes<HTMLSelectElement> & {
  label: string;
  options: Array<{ value: string; label: string }>;
  error?: string;
};

export function SelectField({ label, options, error, id, ...select }: SelectProps) {
  const autoId = useId();
  const selectId = id ?? autoId;
  return (
    <div className="field">
      <label htmlFor={selectId}>{label}</label>
      <select
        id={selectId}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${selectId}-error` : undefined}
        {...select}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {error && (
        <p className="field-error" id={`${selectId}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** A failed request, announced; field errors are listed too in case their field is not on screen. */
export function ErrorMessage({ error, fields = [] }: { error: ApiFailure | undefined; fields?: string[] }) {
  if (!error) return null;
  const others = error.errors.filter((e) => !fields.includes(e.field));
  return (
    <div className="notice notice-error" role="alert">
      <p>{error.message}</p>
      {others.length > 0 && (
        <ul>
          {others.map((e) => (
            <li key={e.field}>{e.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Notice({ children, tone = 'info' }: { children: ReactNode; tone?: 'info' | 'success' | 'warning' }) {
  return (
    <div className={`notice notice-${tone}`} role="status">
      {children}
    </div>
  );
}

/** A wide table scrolls sideways on a narrow screen; the region is focusable so keyboards can scroll it. */
export function TableRegion({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export function StatusBadge({ status }: { status: string | null }) {
  if (!status) return <>—</>;
  return <span className={`badge badge-${status.toLowerCase()}`}>{status}</span>;
}

export function Pagination({
  page,
  totalPages,
  total,
  onPage,
  label,
}: {
  page: number;
  totalPages: number;
  total: number;
  onPage: (page: number) => void;
  label: string;
}) {
  if (totalPages <= 1 && page <= 1) return <p className="muted">{total === 1 ? '1 item' : `${total} items`}</p>;
  return (
    <nav className="pagination" aria-label={`${label} pages`}>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous
      </button>
      <span>
        Page {Math.min(page, Math.max(totalPages, 1))} of {Math.max(totalPages, 1)} ({total}{' '}
        {total === 1 ? 'item' : 'items'})
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= totalPages}>
        Next
      </button>
    </nav>
  );
}

/**
 * Copies a value. The Clipboard API needs a secure context and permission; where it is refused the value's
 * field is selected instead so the user can press Ctrl+C.
 */
export function CopyButton({ value, label, fieldId }: { value: string; label: string; fieldId: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'select'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      const field = document.getElementById(fieldId) as HTMLInputElement | null;
      field?.focus();
      field?.select();
      setState('select');
    }
  };
  return (
    <>
      <button type="button" className="secondary" onClick={() => void copy()}>
        {label}
      </button>
      <span className="copy-state" role="status">
        {state === 'copied' ? 'Copied' : state === 'select' ? 'Selected: press Ctrl+C to copy' : ''}
      </span>
    </>
  );
}
