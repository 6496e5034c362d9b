import { useState, type FormEvent } from 'react';
import { api } from './api.js';
import { Card, ErrorText, ShownOnce, StatusPill, useInterval, useLoad } from './components.js';
import { formatDate } from './format.js';
// Both services answer these routes with the same shapes (packages/platform/src/webhooks);
// the email service's document names them.
import type { paths } from '../../../client/src/generated/email-api.js';

type Json<P extends keyof paths, M extends 'get' | 'post' | 'delete', S extends number> = paths[P][M] extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;
type WebhookList = Json<'/api/dashboard/webhooks', 'get', 200>;
type Webhook = WebhookList['webhooks'][number];
type WebhookCreated = Json<'/api/dashboard/webhooks', 'post', 200>;
type DeliveryLog = Json<'/api/dashboard/webhooks/{id}/deliveries', 'get', 200>;
interface RequestIdentity {
  success: boolean;
  identity: { webhook_id: string; created_at: string; secret?: string } | null;
}

export interface WebhooksPageProps {
  /** The service's events, in its canonical order, each with what it means. */
  events: Array<{ name: string; explain: string }>;
  /** An example endpoint URL for the form. */
  placeholder: string;
  /** What makes deliveries happen (shown while an endpoint has none). */
  cause: string;
  /** The service takes a per-request `webhook_url`: show its signing secret. */
  requestSecret?: boolean;
}

export function WebhooksPage({ events: EVENTS, placeholder, cause, requestSecret = false }: WebhooksPageProps) {
  const hooks = useLoad(() => api<WebhookList>('/api/dashboard/webhooks'));
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(EVENTS.map((e) => e.name));
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<string | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const created = await api<WebhookCreated>('/api/dashboard/webhooks', { method: 'POST', json: { url: url.trim(), events: events.join(',') } });
      setSecret(created.webhook.secret);
      setUrl('');
      setOpen(created.webhook.webhook_id);
      hooks.reload();
    } catch (err) {
      setError(err);
    }
  };

  const remove = async (h: Webhook) => {
    if (!window.confirm(`Delete the webhook to ${h.url}? Pending deliveries are cancelled.`)) return;
    setError(null);
    try {
      await api(`/api/dashboard/webhooks?id=${encodeURIComponent(h.webhook_id)}`, { method: 'DELETE' });
      if (open === h.webhook_id) setOpen(null);
      hooks.reload();
    } catch (err) {
      setError(err);
    }
  };

  const toggle = (name: string, on: boolean) => setEvents((ev) => (on ? [...ev, name] : ev.filter((x) => x !== name)));
  const active = hooks.data?.webhooks.filter((h) => h.active) ?? [];

  return (
    <>
      <Card title="Add a webhook">
        <form onSubmit={create} className="stack">
          <label>
            Endpoint URL (HTTPS)
            <input name="webhook-url" type="url" required placeholder={placeholder} value={url} onChange={(e) => setUrl(e.target.value)} />
          </label>
          <fieldset>
            <legend>Events</legend>
            {EVENTS.map((ev) => (
              <label key={ev.name} className="check">
                <input type="checkbox" checked={events.includes(ev.name)} onChange={(e) => toggle(ev.name, e.target.checked)} /> <code>{ev.name}</code> <span className="muted">— {ev.explain}</span>
              </label>
            ))}
          </fieldset>
          <div><button type="submit" className="primary" disabled={events.length === 0}>Add webhook</button></div>
        </form>
        {secret && <ShownOnce label="Signing secret" value={secret} onDismiss={() => setSecret(null)} />}
        <p className="muted small">Each delivery is signed: <code>X-Service-Signature: sha256=&lt;HMAC-SHA256 of the body under the secret&gt;</code>. Failed deliveries are retried for about a day.</p>
        <ErrorText error={error} />
      </Card>
      <Card title="Your webhooks">
        <ErrorText error={hooks.error} />
        {hooks.data && active.length === 0 && <p className="muted">No webhooks.</p>}
        {active.map((h) => (
          <div key={h.webhook_id} className="hook">
            <div className="hook-head">
              <div>
                <code className="url">{h.url}</code>
                <div className="muted small">{h.events.split(',').join(', ')} · created {formatDate(h.created_at)} · last sent {formatDate(h.last_triggered)}</div>
              </div>
              <div className="row">
                <button type="button" aria-expanded={open === h.webhook_id} onClick={() => setOpen(open === h.webhook_id ? null : h.webhook_id)}>{open === h.webhook_id ? 'Hide deliveries' : 'Deliveries'}</button>
                <button type="button" className="danger" onClick={() => void remove(h)} aria-label={`Delete webhook ${h.url}`}>Delete</button>
              </div>
            </div>
            {open === h.webhook_id && <Deliveries webhookId={h.webhook_id} cause={cause} />}
          </div>
        ))}
      </Card>
      {requestSecret && <RequestSecret cause={cause} />}
    </>
  );
}

/** The account's signing secret for a `webhook_url` sent with a request, and that identity's deliveries. */
function RequestSecret({ cause }: { cause: string }) {
  const current = useLoad(() => api<RequestIdentity>('/api/dashboard/webhooks/request-secret'));
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState(false);
  const identity = current.data?.identity ?? null;

  const rotate = async () => {
    if (identity && !window.confirm('Replace the request signing secret? Deliveries not yet sent are signed with the new one; receivers checking the old one will refuse them.')) return;
    setError(null);
    try {
      const made = await api<RequestIdentity>('/api/dashboard/webhooks/request-secret', { method: 'POST' });
      setSecret(made.identity?.secret ?? null);
      current.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Card title="Per-request webhook URL">
      <p className="muted small">
        A request can name its own <code>webhook_url</code>; those deliveries are signed with this account-wide secret.
        {identity ? ` Made ${formatDate(identity.created_at)}.` : ' None yet: a request with webhook_url is refused until you make one.'}
      </p>
      <div className="row">
        <button type="button" className={identity ? '' : 'primary'} onClick={() => void rotate()}>{identity ? 'Replace secret' : 'Make signing secret'}</button>
        {identity && <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide deliveries' : 'Deliveries'}</button>}
      </div>
      {secret && <ShownOnce label="Request signing secret" value={secret} onDismiss={() => setSecret(null)} />}
      <ErrorText error={current.error ?? error} />
      {identity && open && <Deliveries webhookId={identity.webhook_id} cause={cause} />}
    </Card>
  );
}

function Deliveries({ webhookId, cause }: { webhookId: string; cause: string }) {
  const log = useLoad(() => api<DeliveryLog>(`/api/dashboard/webhooks/${encodeURIComponent(webhookId)}/deliveries?limit=20`), [webhookId]);
  const [error, setError] = useState<unknown>(null);
  // Pending deliveries change on their own: refresh while any is pending (or none arrived yet).
  const busy = !log.data || log.data.deliveries.length === 0 || log.data.deliveries.some((d) => d.state === 'pending');
  useInterval(log.reload, 2000, busy);

  const redeliver = async (deliveryId: string) => {
    setError(null);
    try {
      await api(`/api/dashboard/webhooks/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`, { method: 'POST' });
      log.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div className="deliveries" aria-live="polite">
      <h3>Recent deliveries</h3>
      <ErrorText error={log.error ?? error} />
      {log.data && log.data.deliveries.length === 0 && <p className="muted">No deliveries yet. They appear when {cause}.</p>}
      {log.data && log.data.deliveries.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Created</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {log.data.deliveries.map((d) => (
                <tr key={d.delivery_id} data-delivery={d.delivery_id}>
                  <td><code>{d.event}</code>{d.target_url && <div className="muted small url">{d.target_url}</div>}</td>
                  <td><StatusPill status={d.state} />{d.next_retry_at && <div className="muted small">next try {formatDate(d.next_retry_at)}</div>}</td>
                  <td>
                    <ol className="attempts">
                      {d.history.map((a) => (
                        <li key={a.attempt}>
                          #{a.attempt} {formatDate(a.started_at)}: {a.status_code !== null ? `HTTP ${a.status_code}` : 'no answer'} in {a.duration_ms} ms{a.error ? ` — ${a.error}` : ''}
                        </li>
                      ))}
                    </ol>
                  </td>
                  <td>{formatDate(d.created_at)}</td>
                  <td>{d.state === 'dead' && <button type="button" onClick={() => void redeliver(d.delivery_id)}>Redeliver</button>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
