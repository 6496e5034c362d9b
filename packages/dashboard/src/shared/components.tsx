import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { describeError } from './api.js';
import { formatNumber } from './format.js';
import { Link, usePage } from './router.js';
import { useSession } from './session.js';

export interface NavItem {
  to: string;
  label: string;
}

/** Header with the product, the account and sign-out; navigation; the page. */
export function Layout({ product, nav, children }: { product: string; nav: NavItem[]; children: ReactNode }) {
  const { account, signOut } = useSession();
  const page = usePage();
  const label = nav.find((n) => n.to === page)?.label ?? nav[0]?.label ?? '';
  const first = useRef(true);
  useEffect(() => {
    document.title = `${label} — ${product}`;
    // After an in-app navigation, screen readers and keyboard users start at the new content.
    if (first.current) first.current = false;
    else document.getElementById('main')?.focus();
  }, [label, product]);
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <header className="topbar">
        <h1 className="brand">{product}</h1>
        <span className="who">
          <span className="muted">{account.email}</span>
          <span className="badge">{account.plan}</span>
          <button type="button" onClick={() => void signOut()}>Sign out</button>
        </span>
      </header>
      <nav className="tabs" aria-label="Dashboard sections">
        {nav.map((n) => (
          <Link key={n.to} to={n.to} aria-current={page === n.to ? 'page' : undefined}>{n.label}</Link>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>{children}</main>
    </>
  );
}

export function Card({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card" aria-label={title}>
      <div className="card-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** A labelled meter: used of limit, with the numbers in words for screen readers. */
export function Meter({ label, used, limit }: { label: string; used: number; limit: number }) {
  const pct = limit > 0 ? Math.min(100, (used / limit) * 100) : 0;
  return (
    <div className="meter-block">
      <div className="meter-label"><span>{label}</span><span>{formatNumber(used)} of {formatNumber(limit)}</span></div>
      <div className={`meter ${pct >= 90 ? 'danger' : pct >= 75 ? 'warn' : ''}`} role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={limit} aria-valuenow={used} aria-valuetext={`${formatNumber(used)} of ${formatNumber(limit)} used`}>
        <div style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

export function ProgressBar({ label, pct }: { label: string; pct: number }) {
  const v = Math.max(0, Math.min(100, Math.round(pct)));
  return (
    <div className="progress-block">
      <div className="meter-label"><span>{label}</span><span>{v} %</span></div>
      <div className="meter" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={v}>
        <div style={{ width: `${v}%` }} />
      </div>
    </div>
  );
}

/** Copies a value to the clipboard and says so. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setDone(true);
      setTimeout(() => setDone(false), 2000);
    } catch {
      // clipboard refused (insecure context): the value stays selectable on screen
    }
  };
  return <button type="button" onClick={() => void copy()} aria-live="polite">{done ? 'Copied' : label}</button>;
}

/** A secret shown once, selectable, with a copy button and a warning. */
export function ShownOnce({ label, value, onDismiss }: { label: string; value: string; onDismiss: () => void }) {
  return (
    <div className="shown-once" role="status">
      <p><strong>{label}</strong> — shown only now. Copy it and keep it somewhere safe: it cannot be displayed again.</p>
      <div className="secret-row">
        <code className="secret" data-testid="secret">{value}</code>
        <CopyButton value={value} />
        <button type="button" onClick={onDismiss}>Done</button>
      </div>
    </div>
  );
}

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  return <p role="alert" className="error">{describeError(error)}</p>;
}

/** Loads data once (and again on `reload()`); `data` keeps the last good answer while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): { data: T | undefined; error: unknown; reload: () => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    loadRef.current().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
      },
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [tick, ...deps]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload };
}

/** Calls `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => ref.current(), ms);
    return () => clearInterval(t);
  }, [ms, active]);
}

/**
 * Calls `fn` while `active`: after 1 s, then less and less often (×1.5 each time, at most
 * every `maxMs`), so waiting for a long queue does not spend the plan's requests per minute.
 * A new `key` starts the schedule again.
 */
export function usePolling(fn: () => Promise<void>, active: boolean, key: unknown, maxMs = 5000): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    if (!active) return;
    let live = true;
    let delay = 1000;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      await ref.current();
      if (!live) return;
      delay = Math.min(delay * 1.5, maxMs);
      timer = setTimeout(() => void tick(), delay);
    };
    timer = setTimeout(() => void tick(), delay);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [active, key, maxMs]);
}

/** Status words in a coloured pill (the word carries the meaning; colour only helps). */
export function StatusPill({ status }: { status: string }) {
  return <span className={`pill pill-${status}`}>{status}</span>;
}
