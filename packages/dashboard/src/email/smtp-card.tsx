import { Card, ErrorText, useLoad } from '../shared/components.js';
import type { Readiness, SmtpSelfCheck } from './types.js';

const STATUS: Record<SmtpSelfCheck['status'], { text: string; tone: 'yes' | 'no' | 'muted' }> = {
  available: { text: 'Available: an egress reaches port 25', tone: 'yes' },
  unavailable: { text: 'Unavailable: verifications with SMTP answer smtp_unavailable', tone: 'no' },
  unknown: { text: 'Not known: port 25 is not checked', tone: 'muted' },
  pending: { text: 'Checking…', tone: 'muted' },
};

const PORT: Record<SmtpSelfCheck['egresses'][number]['port25']['status'], string> = {
  open: 'open',
  refused_greeting: 'open, greeting refuses us',
  closed: 'closed (connection refused)',
  timeout: 'closed (no answer)',
  egress_failed: 'egress failed',
  not_configured: 'not checked',
  error: 'not checked',
};

/**
 * The SMTP self-check of the server (issue 23), from `/readyz`: whether probing can get out,
 * and per egress port 25, STARTTLS, FCrDNS and block lists. Shown only where the server
 * probes over SMTP.
 */
export function SmtpCard() {
  // /readyz answers 503 with the same shape when the database is down: its body is still read.
  const ready = useLoad(() => fetch('/readyz', { headers: { accept: 'application/json' } }).then((r) => r.json() as Promise<Readiness>));
  const smtp = ready.data?.smtp;
  if (!ready.error && !smtp) return null;
  return (
    <Card title="SMTP probing">
      <ErrorText error={ready.error} />
      {smtp && (
        <>
          <p className={`status ${STATUS[smtp.status].tone}`}>{STATUS[smtp.status].text}</p>
          {smtp.reason && <p className="muted">Why: {smtp.reason}</p>}
          <dl className="facts">
            <div><dt>Probe host</dt><dd>{smtp.probe_host ?? 'not configured (EMAIL_SMTP_PROBE_HOST)'}</dd></div>
            {smtp.checked_at && <div><dt>Checked</dt><dd>{new Date(smtp.checked_at).toLocaleString()}</dd></div>}
          </dl>
          {smtp.egresses.map((e) => (
            <section key={e.egress} className="egress" aria-label={`Egress ${e.egress}`}>
              <h3>{e.egress}</h3>
              <ul className="features">
                <li className={e.port25.status === 'open' ? 'yes' : 'no'}>Port 25: {PORT[e.port25.status]}</li>
                <li className={e.starttls === 'offered' ? 'yes' : 'no'}>STARTTLS: {e.starttls.replace('_', ' ')}</li>
                <li className={e.fcrdns.status === 'pass' ? 'yes' : 'no'}>FCrDNS: {e.fcrdns.status} ({e.fcrdns.detail})</li>
                {e.blocklists.map((l) => (
                  <li key={l.zone} className={l.status === 'not_listed' ? 'yes' : 'no'}>{l.zone}: {l.status.replace('_', ' ')}{l.detail ? ` (${l.detail})` : ''}</li>
                ))}
              </ul>
            </section>
          ))}
        </>
      )}
    </Card>
  );
}
