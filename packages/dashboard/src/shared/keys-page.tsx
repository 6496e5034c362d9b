import { useState, type FormEvent } from 'react';
import { api } from './api.js';
import { Card, ErrorText, ShownOnce, useLoad } from './components.js';
import { formatDate } from './format.js';

interface KeyRow {
  id: string;
  name: string;
  key_preview: string;
  created_at: string;
  last_used: string | null;
}

interface KeyCreated extends KeyRow {
  api_key: string;
}

/**
 * API keys of the signed-in account (`/api/dashboard/api-keys`, the same on both services):
 * the list shows masked previews only; a new key is shown once, then only its preview.
 */
export function KeysPage({ keyPrefix }: { keyPrefix: string }) {
  const keys = useLoad(() => api<{ keys: KeyRow[] }>('/api/dashboard/api-keys'));
  const [name, setName] = useState('');
  const [created, setCreated] = useState<KeyCreated | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setCreated(await api<KeyCreated>('/api/dashboard/api-keys', { method: 'POST', json: { name: name.trim() } }));
      setName('');
      keys.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (k: KeyRow) => {
    if (!window.confirm(`Revoke the key "${k.name}" (${k.key_preview})? Programs using it will be refused at once.`)) return;
    setError(null);
    try {
      await api(`/api/dashboard/api-keys?id=${encodeURIComponent(k.id)}`, { method: 'DELETE' });
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      <Card title="Create an API key">
        <p className="muted">Keys start with <code>{keyPrefix}</code>. Use them from your servers only — never in a web page or a mobile app.</p>
        <form className="row" onSubmit={create}>
          <label className="grow">
            Key name
            <input name="key-name" required maxLength={100} placeholder="e.g. production server" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={busy}>Create key</button>
        </form>
        {created && <ShownOnce label={`New key "${created.name}"`} value={created.api_key} onDismiss={() => setCreated(null)} />}
        <ErrorText error={error} />
      </Card>
      <Card title="Your API keys">
        <ErrorText error={keys.error} />
        {keys.data && keys.data.keys.length === 0 && <p className="muted">No active keys.</p>}
        {keys.data && keys.data.keys.length > 0 && (
          <div className="table-wrap">
            <table className="cards">
              <thead>
                <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
              </thead>
              <tbody>
                {keys.data.keys.map((k) => (
                  <tr key={k.id}>
                    <td data-label="Name">{k.name}</td>
                    <td data-label="Key"><code>{k.key_preview}</code></td>
                    <td data-label="Created">{formatDate(k.created_at)}</td>
                    <td data-label="Last used">{formatDate(k.last_used)}</td>
                    <td className="actions"><button type="button" className="danger" onClick={() => void revoke(k)} aria-label={`Revoke key ${k.name}`}>Revoke</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
