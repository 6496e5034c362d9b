import { api, ApiError } from '../shared/api.js';
import { Card, ErrorText, Meter, useLoad } from '../shared/components.js';
import { formatDateOnly, formatDay, formatNumber } from '../shared/format.js';
import { SmtpCard } from './smtp-card.js';
import type { Account, DailyUsage } from './types.js';

export function OverviewPage() {
  const account = useLoad(() => api<Account>('/api/v1/account'));
  const usage = useLoad(() => api<DailyUsage>('/api/dashboard/usage').catch((e: unknown) => (e instanceof ApiError && e.status === 404 ? null : Promise.reject(e))));
  const a = account.data;
  return (
    <div className="grid">
      <Card title="Plan and quota">
        <ErrorText error={account.error} />
        {a && (
          <>
            <p className="big">{a.account.plan_name} <span className="muted">plan</span></p>
            <Meter label="Verifications this month" used={a.quota.used} limit={a.quota.limit} />
            <dl className="facts">
              <div><dt>Remaining</dt><dd>{formatNumber(a.quota.remaining)}</dd></div>
              <div><dt>Quota resets</dt><dd>{formatDateOnly(a.quota.reset_date)}</dd></div>
              <div><dt>Rate limit</dt><dd>{formatNumber(a.rate_limit_rpm)} requests/min</dd></div>
            </dl>
            <ul className="features" aria-label="Plan features">
              <li className={a.features.smtp ? 'yes' : 'no'}>{a.features.smtp ? 'Included' : 'Not included'}: SMTP mailbox probing</li>
              <li className={a.features.webhooks ? 'yes' : 'no'}>{a.features.webhooks ? 'Included' : 'Not included'}: webhooks</li>
              <li className={a.features.catch_all ? 'yes' : 'no'}>{a.features.catch_all ? 'Included' : 'Not included'}: catch-all detection</li>
            </ul>
          </>
        )}
      </Card>
      <Card title="Verifications per day">
        <ErrorText error={usage.error} />
        {usage.data === null && <p className="muted">Daily figures are not available from this server.</p>}
        {usage.data && <DailyChart days={usage.data.days} />}
      </Card>
      <SmtpCard />
    </div>
  );
}

/** A bar chart in SVG (no chart library, nothing loaded from elsewhere), with a table for screen readers. */
function DailyChart({ days }: { days: DailyUsage['days'] }) {
  const max = Math.max(1, ...days.map((d) => d.verifications));
  const total = days.reduce((s, d) => s + d.verifications, 0);
  const w = 480;
  const h = 170;
  const bw = w / Math.max(days.length, 1);
  return (
    <figure className="chart">
      <svg viewBox={`-24 0 ${w + 48} ${h + 26}`} role="img" aria-label={`Verifications per day this month: ${formatNumber(total)} in total, at most ${formatNumber(max)} in one day.`}>
        <line x1={0} y1={h} x2={w} y2={h} className="axis" />
        {days.map((d, i) => {
          const bh = (d.verifications / max) * (h - 16);
          return (
            <g key={d.date}>
              <rect x={i * bw + bw * 0.15} y={h - bh} width={bw * 0.7} height={bh} className="bar">
                <title>{`${formatDay(d.date)}: ${formatNumber(d.verifications)}`}</title>
              </rect>
              {(days.length - 1 - i) % Math.ceil(days.length / 6) === 0 && (
                <text x={i * bw + bw / 2} y={h + 18} textAnchor="middle" className="tick">{formatDay(d.date)}</text>
              )}
            </g>
          );
        })}
        <text x={2} y={14} className="tick">{formatNumber(max)}</text>
      </svg>
      <figcaption className="muted">{formatNumber(total)} verifications this month (UTC days).</figcaption>
      <div className="sr-only">
        <table>
          <caption>Verifications per day</caption>
          <tbody>{days.map((d) => <tr key={d.date}><th scope="row">{d.date}</th><td>{d.verifications}</td></tr>)}</tbody>
        </table>
      </div>
    </figure>
  );
}
