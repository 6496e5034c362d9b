import { createContext, useCallback, useContext, useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { api, ApiError, describeError, setCsrfToken, setUnauthorizedHandler } from './api.js';

export interface SessionAccount {
  id: string;
  email: string;
  plan: string;
}

interface SessionAnswer {
  account: SessionAccount;
  csrf_token: string;
}

/** `GET /api/dashboard/session`: nulls when nobody is signed in (a 200, so the browser logs no error). */
type SessionProbe = SessionAnswer | { account: null; csrf_token: null };

interface SessionState {
  account: SessionAccount;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

/** The signed-in account (inside {@link SessionGate} only). */
export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionGate');
  return s;
}

/**
 * Asks the service for the current session on load (the CSRF token comes back with it and
 * stays in memory), shows the sign-in form when there is none, and the app when there is.
 */
export function SessionGate({ product, children }: { product: string; children: ReactNode }) {
  const [account, setAccount] = useState<SessionAccount | null | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | null>(null);

  const accept = useCallback((s: SessionAnswer) => {
    setCsrfToken(s.csrf_token);
    setAccount(s.account);
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setCsrfToken(null);
      setAccount(null);
    });
    api<SessionProbe>('/api/dashboard/session', { quiet401: true })
      .then((s) => (s.account === null ? setAccount(null) : accept(s)))
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 401) setAccount(null);
        else setLoadError(describeError(err));
      });
    return () => setUnauthorizedHandler(null);
  }, [accept]);

  const signOut = useCallback(async () => {
    try {
      await api('/api/dashboard/session', { method: 'DELETE' });
    } finally {
      setCsrfToken(null);
      setAccount(null);
    }
  }, []);

  if (loadError) return <CenteredCard title={product}><p role="alert" className="error">{loadError}</p></CenteredCard>;
  if (account === undefined) return <CenteredCard title={product}><p aria-live="polite">Loading…</p></CenteredCard>;
  if (account === null) return <SignIn product={product} onSignedIn={accept} />;
  return <SessionContext.Provider value={{ account, signOut }}>{children}</SessionContext.Provider>;
}

function CenteredCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="signin">
      <div className="card signin-card">
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

function SignIn({ product, onSignedIn }: { product: string; onSignedIn: (s: SessionAnswer) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api<SessionAnswer>('/api/dashboard/session', { method: 'POST', json: { email, password }, quiet401: true }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError('The e-mail address or the password is wrong.');
      else if (err instanceof ApiError && err.status === 429) setError('Too many failed attempts. Wait a few minutes, then try again.');
      else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <CenteredCard title={product}>
      <p className="muted">Sign in with your account&apos;s e-mail address and password.</p>
      <form onSubmit={submit} className="stack">
        <label>
          E-mail address
          <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
        </label>
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {error && <p role="alert" className="error">{error}</p>}
        <button type="submit" className="primary" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
      <p className="muted small">No password yet? Your operator sets one with <code>npm run admin -- … set-password</code>.</p>
    </CenteredCard>
  );
}
