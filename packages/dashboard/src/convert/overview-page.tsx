import { api } from '../shared/api.js';
import { Card, ErrorText, Meter, useLoad } from '../shared/components.js';
import { formatBytes, formatDate, formatDateOnly, formatNumber, lastDayBefore } from '../shared/format.js';
import type { Limits, Usage } from './types.js';

export function OverviewPage() {
  const usage = useLoad(() => api<Usage>('/api/v1/account/usage'));
  const limits = useLoad(() => api<Limits>('/api/v1/account/limits'));
  const u = usage.data;
  const l = limits.data;
  return (
    <div className="grid">
      <Card title="Usage this month">
        <ErrorText error={usage.error} />
        {u && (
          <>
            <Meter label="Conversions this month" used={u.quota.used} limit={u.quota.limit} />
            <dl className="facts">
              <div><dt>Remaining</dt><dd>{formatNumber(u.quota.remaining)}</dd></div>
              <div><dt>Period</dt><dd>{formatDateOnly(u.period_start)} – {lastDayBefore(u.period_end)}</dd></div>
            </dl>
            {u.api_keys.length > 0 && (
              <div className="table-wrap">
                <table className="cards">
                  <caption>Requests per API key this month</caption>
                  <thead><tr><th scope="col">Key</th><th scope="col">Requests</th><th scope="col">Last used</th></tr></thead>
                  <tbody>{u.api_keys.map((k) => <tr key={k.id}><td data-label="Key">{k.name} <code>{k.key_preview}</code></td><td data-label="Requests">{formatNumber(k.requests_this_month)}</td><td data-label="Last used">{formatDate(k.last_used)}</td></tr>)}</tbody>
                </table>
              </div>
            )}
          </>
        )}
      </Card>
      <Card title="Plan limits">
        <ErrorText error={limits.error} />
        {l && (
          <>
            <p className="big">{l.plan_name} <span className="muted">plan</span></p>
            <dl className="facts">
              <div><dt>Conversions per month</dt><dd>{formatNumber(l.monthly_conversions)}</dd></div>
              <div><dt>Largest file</dt><dd>{formatBytes(l.max_file_bytes)}</dd></div>
              <div><dt>Rate limit</dt><dd>{formatNumber(l.rate_limit_rpm)} requests/min</dd></div>
              <div><dt>Conversions at once</dt><dd>{formatNumber(l.max_concurrent_jobs)}</dd></div>
            </dl>
          </>
        )}
      </Card>
    </div>
  );
}
