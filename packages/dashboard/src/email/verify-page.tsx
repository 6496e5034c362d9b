import { useState, type FormEvent } from 'react';
import { api } from '../shared/api.js';
import { Card, ErrorText, StatusPill } from '../shared/components.js';
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
  dns_error: 'DNS did not answer properly; try again later.',
  unverifiable: 'The mailbox could not be checked.',
};

const STATUS: Record<string, string> = {
  valid: 'Mail to this address should be delivered.',
  invalid: 'Mail to this address will bounce: do not send.',
  risky: 'Mail may be delivered but the address is risky (see the reason).',
  unknown: 'The address could not be checked conclusively.',
};

type Check = { name: string; result: 'pass' | 'fail' | 'info' | 'skipped'; value: string; explain: string };

function explainChecks(v: Verification): Check[] {
  const c = v.checks;
  const out: Check[] = [
    { name: 'Syntax', result: c.syntax ? 'pass' : 'fail', value: c.syntax ? 'valid' : 'invalid', explain: c.syntax ? 'The address is well formed.' : 'The address is not well formed, so no other check was needed.' },
    { name: 'Domain and DNS', result: c.dns ? 'pass' : 'fail', value: c.dns ? 'mail server found' : 'no mail server', explain: c.dns ? `The domain publishes ${c.mx.count} mail server${c.mx.count === 1 ? '' : 's'}${c.mx.providers.length ? ` (${c.mx.providers.join(', ')})` : ''}.` : 'The domain does not exist or publishes no mail server.' },
    { name: 'Mail server grade', result: 'info', value: c.mx.grade, explain: 'How trustworthy the domain\u2019s mail setup looks, from A (best) to F.' },
    { name: 'SMTP mailbox check', result: c.smtp === null ? 'skipped' : c.smtp ? 'pass' : 'fail', value: c.smtp === null ? 'not run' : c.smtp ? 'accepted' : 'refused', explain: c.smtp === null ? 'The mail server was not asked (SMTP probing off, not in your plan, or not needed).' : c.smtp ? 'The mail server accepted the recipient.' : 'The mail server refused the recipient or could not be asked.' },
    { name: 'Catch-all domain', result: c.catch_all === null ? 'skipped' : c.catch_all ? 'fail' : 'pass', value: c.catch_all === null ? 'not checked' : c.catch_all ? 'yes' : 'no', explain: c.catch_all === null ? 'Not tested (needs SMTP probing and a plan with catch-all detection).' : c.catch_all ? 'The server accepts any address, so acceptance proves little.' : 'The server refuses unknown addresses, so its answer is meaningful.' },
    { name: 'Disposable provider', result: c.disposable ? 'fail' : 'pass', value: c.disposable ? 'yes' : 'no', explain: c.disposable ? 'Throw-away addresses usually stop working within hours.' : 'The domain is not on the disposable-provider list.' },
    { name: 'Role address', result: c.role_based ? 'fail' : 'pass', value: c.role_based ? 'yes' : 'no', explain: c.role_based ? 'Shared by a team; often a poor target for marketing mail.' : 'The local part is not a role name (info, admin, …).' },
    { name: 'Free provider', result: 'info', value: c.free_provider ? 'yes' : 'no', explain: c.free_provider ? 'A free webmail provider (Gmail, Outlook, …): a personal rather than a business address.' : 'Not a free webmail provider.' },
  ];
  return out;
}

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
            <table className="checks">
              <thead><tr><th scope="col">Check</th><th scope="col">Result</th><th scope="col">What it means</th></tr></thead>
              <tbody>
                {explainChecks(result).map((c) => (
                  <tr key={c.name} data-check={c.name}>
                    <th scope="row">{c.name}</th>
                    <td><span className={`mark mark-${c.result}`}>{c.value}</span></td>
                    <td>{c.explain}</td>
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
