import { Counter, Gauge, type Registry } from 'prom-client';
import type { ServiceCore } from '@mailconv/platform';
import type { VerificationResult } from '@mailconv/verifier';
import type { EmailTables } from './db/schema.js';

/**
 * The email service's own metrics on the app's registry (README, "Metrics"): verifications
 * by status and reason (every path: single, batch, public, job chunks run by this process),
 * and the job backlog read from the database at each scrape, so any API process reports
 * the backlog of the whole deployment.
 */
export function registerEmailMetrics(registry: Registry, core: ServiceCore<EmailTables>, clock: () => Date): { onVerified: (result: VerificationResult) => void } {
  const verifications = new Counter({ name: 'email_verifications_total', help: 'Addresses verified by this process, by status and reason (reason "none" when there is none).', labelNames: ['status', 'reason'], registers: [registry] });
  const state = { pending: 0, leased: 0, addresses: 0, expired: 0 };
  // One read per scrape shared by the three gauges (prom-client collects them concurrently);
  // the index on state keeps it to the chunks not done.
  let reading: Promise<void> | null = null;
  const read = async () => {
    const rows = await core.database.db
      .selectFrom('job_chunks')
      .select((eb) => ['state', eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('size').as('addresses')])
      .where('state', 'in', ['pending', 'leased'])
      .groupBy('state')
      .execute();
    const row = (s: string) => rows.find((r) => r.state === s);
    state.pending = Number(row('pending')?.n ?? 0);
    state.leased = Number(row('leased')?.n ?? 0);
    state.addresses = Number(row('pending')?.addresses ?? 0) + Number(row('leased')?.addresses ?? 0);
    const late = await core.database.db.selectFrom('job_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'leased').where('lease_until', '<', clock().toISOString()).executeTakeFirst();
    state.expired = Number(late?.n ?? 0);
  };
  const refresh = () => (reading ??= read().finally(() => (reading = null)));
  new Gauge({
    name: 'email_job_chunks',
    help: 'Job chunks not done yet, all processes together, by state (pending: waiting for a worker; leased: being verified).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      await refresh();
      this.set({ state: 'pending' }, state.pending);
      this.set({ state: 'leased' }, state.leased);
    },
  });
  new Gauge({
    name: 'email_job_backlog_addresses',
    help: 'Addresses in job chunks not done yet (pending or leased), all processes together.',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(state.addresses);
    },
  });
  new Gauge({
    name: 'email_job_leases_expired',
    help: 'Leased job chunks whose lease has run out (their worker died or stalled) and that another worker will take over. Alert if it stays above 0.',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(state.expired);
    },
  });
  return { onVerified: (result) => verifications.inc({ status: result.status, reason: result.reason ?? 'none' }) };
}
