import { useState, type FormEvent } from 'react';
import { api } from '../shared/api.js';
import { Card, ErrorText, StatusPill } from '../shared/components.js';
import { explainChecks } from './checks.js';
import type { Verification } from './types.js';

const REASONS: Record<string, string> = {
  invalid_syntax: 'The address is not written correctly (RFC 5321/5322).',
  domain_not_found: 'The domain does not exist in DNS.',
  domain_no_mx: 'The domain has no mail server (no MX record and no usable A/AAAA record).',
  user_unknown: 'The mail server said this mailbox does not exist.',
  mailbox_disabled: 'The mail server said this mailbox is disabled.',
  disposable: 'The domain belongs to a disposable (throw-away) e-mail provider.',
  mailbox_full: 'The mailbox exists but is full; mail would bounce for now.',
  catch_all: 'The domain accepts mail for any address, so this mailbox cannot be confirmed.',
  role_based: 'A role address (info@, support@…) read by a team, not a person.',
  greylisted: 'The mail server asked to try again later (greylisting); the answer is not final.',
  smtp_blocked: 'The mail server refused to talk to the verifier.',
  smtp_timeout: 'The mail server did not answer in time.',
  smtp_unreachable: 'No mail server of the domain could be reached.',
  smtp_unavailable: 'The verifier cannot reach any mail server from where it runs (its outbound port 25 is closed), so the mailbox was not checked.',
  dns_error: 'DNS did not answer properly; try again later.',
  unverifiable: 'The mailbox could not be checked.',
};

const STATUS: Record<string, string> = {
  valid: 'Mail to this address should be delivered.',
  invalid: 'Mail to this address will bounce: do not send.',
  risky: 'Mail may be delivered but the address is risky (see the reason).',
  unknown: 'The address could not be checked conclusively.',
};

export function VerifyPage() {
  const [email, setEmail] = useState('');
  const [smtp, setSmtp] = useState(false);
  const [result, setResult] = useState<Verification | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setResult(await api<Verification>('/api/v1/verify-single', { method: 'POST', json: { email: email.trim(), use_smtp: smtp } }));
    } catch (err) {
      setError(err);
      setResult(null);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Card title="Verify one address">
        <form className="row" onSubmit={submit}>
          <label className="grow">
            E-mail address
            <input name="verify-email" type="text" inputMode="email" required value={email} onChange={(e) => setEmail(e.target.value)} placeholder="someone@example.com" />
          </label>
          <label className="check">
            <input type="checkbox" checked={smtp} onChange={(e) => setSmtp(e.target.checked)} /> Probe the mailbox over SMTP
          </label>
          <button type="submit" className="primary" disabled={busy}>{busy ? 'Verifying…' : 'Verify'}</button>
        </form>
        <p className="muted small">Each verification uses one unit of your monthly quota. SMTP probing can take several seconds.</p>
        <ErrorText error={error} />
      </Card>
      {result && (
        <Card title="Result">
          <div className="verdict" aria-live="polite">
            <StatusPill status={result.status} />
            <span><strong>{result.normalized}</strong></span>
            <span className="muted">score {result.score}/100 · grade {result.grade} · confidence {result.confidence} %</span>
          </div>
          <p>{STATUS[result.status]} {result.reason ? REASONS[result.reason] ?? result.reason : ''}</p>
          {result.suggestion && <p className="suggestion">Did you mean <strong>{result.suggestion}</strong>?</p>}
          <div className="table-wrap">
            <table className="checks cards">
              <thead><tr><th scope="col">Check</th><th scope="col">Result</th><th scope="col">What was found</th><th scope="col">Why it matters</th></tr></thead>
              <tbody>
                {explainChecks(result).map((c) => (
                  <tr key={c.name} data-check={c.name}>
                    <th scope="row">{c.name}</th>
                    <td data-label="Result"><span className={`mark mark-${c.result}`}>{c.value}</span></td>
                    <td data-label="Found">{c.found}</td>
                    <td data-label="Why it matters" className="muted">{c.matters}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </>
  );
}
