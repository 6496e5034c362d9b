import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ServiceCore } from '@mailconv/platform';
import { MAIL_PROVIDERS, mxProviderLabel } from '@mailconv/verifier';
import type { EmailTables } from './db/schema.js';
import type { EmailObserver } from './observer.js';

/**
 * Distinct provider labels of `email_smtp_probes_total` besides the known providers: MX
 * domains past this many are counted as `other`, so a job over a million small domains
 * cannot grow the series without bound.
 */
export const SMTP_PROVIDER_LABELS = 50;

/** Webhook attempt durations in seconds: 10 ms to the 10 s time-out. */
const WEBHOOK_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const KNOWN_PROVIDERS: ReadonlySet<string> = new Set(MAIL_PROVIDERS.map((p) => p.id));

/**
 * The provider label of a probe: a known provider's id, else the MX host's registrable
 * domain while fewer than `limit` such domains have been seen, else `other`.
 */
export function boundedProviderLabels(limit: number): (provider: string | null, mxHost: string | null) => string {
  const seen = new Set<string>();
  return (provider, mxHost) => {
    const label = mxProviderLabel(provider, mxHost);
    if (KNOWN_PROVIDERS.has(label) || label === 'none' || seen.has(label)) return label;
    if (seen.size >= limit) return 'other';
    seen.add(label);
    return label;
  };
}

/**
 * The email service's own metrics on the app's registry (README, "Metrics"), returned as
 * the observer the services report to: verifications by status and reason (every path:
 * single, batch, public, job chunks run by this process), SMTP probe outcomes per
 * provider, job throughput, lease take-overs, finished jobs and webhook attempts (this
 * process's counters); and the job backlog and webhook outbox read from the database at
 * each scrape, so any API process reports those of the whole deployment.
 */
export function registerEmailMetrics(registry: Registry, core: ServiceCore<EmailTables>, clock: () => Date): EmailObserver {
  const verifications = new Counter({ name: 'email_verifications_total', help: 'Addresses verified by this process, by status and reason (reason "none" when there is none).', labelNames: ['status', 'reason'], registers: [registry] });
  const egressEvents = new Counter({
    name: 'email_smtp_egress_events_total',
    help: 'What happened on each SMTP egress (EMAIL_SMTP_PROXIES, EMAIL_SMTP_SOURCE_ADDRESSES) in this process: session (a session opened through it), failed (the egress itself failed — its proxy or local address — and was taken out for a while), refused (a greeting other than 220), timeout (no connection in time), blocklisted (a refusal naming a block list). Only with egresses configured.',
    labelNames: ['egress', 'event'],
    registers: [registry],
  });
  const cacheLookups = new Counter({
    name: 'email_smtp_cache_lookups_total',
    help: 'SMTP verifications of this process that looked for a reusable outcome of the same address for the same account (EMAIL_SMTP_CACHE_TTL): hit (reused, no probe) or miss (probed). Reused outcomes are not counted in email_smtp_probes_total.',
    labelNames: ['result'],
    registers: [registry],
  });
  const available = new Gauge({
    name: 'email_smtp_available',
    help: 'Whether SMTP probing can work, as the last self-check found (issue 23): 1 an egress reaches port 25 of EMAIL_SMTP_PROBE_HOST, 0 none does (use_smtp answers smtp_unavailable at once), -1 not known (no probe host configured). Only with SMTP probing configured.',
    registers: [registry],
  });
  const selfCheck = new Gauge({
    name: 'email_smtp_self_check',
    help: 'The last SMTP self-check, one series per egress and check: check port25 (result open, refused_greeting, closed, timeout, egress_failed, not_configured, error), starttls (offered, not_offered, failed, not_checked), fcrdns (pass, fail, unknown), blocklist:<zone> (listed, not_listed, error). The value is 1 for the current result.',
    labelNames: ['egress', 'check', 'result'],
    registers: [registry],
  });
  const probes = new Counter({ name: 'email_smtp_probes_total', help: `Addresses probed over SMTP by this process, by provider (known provider id, else the MX host's registrable domain — at most ${SMTP_PROVIDER_LABELS} of those, then "other"; "none" without MX) and outcome (accepted, user_unknown, mailbox_full, disabled, greylisted, rate_limited, blocked, timeout, unreachable, unknown).`, labelNames: ['provider', 'outcome'], registers: [registry] });
  const rateLimited = new Counter({
    name: 'email_smtp_rate_limited_total',
    help: `Rate-limit replies (issue 49: Gmail 421 4.7.28, Microsoft 4.7.500/4.7.650, Yahoo TSS04) to this process's SMTP sessions, one per session or refused connection that met one (each starts or grows its MX host's cool-down), by provider (as email_smtp_probes_total). Addresses answered at once because their host was already cooling down are not replies and are not counted.`,
    labelNames: ['provider'],
    registers: [registry],
  });
  let readCooling: (() => { hosts: number; longestMs: number }) | null = null;
  new Gauge({
    name: 'email_smtp_cooldown_hosts',
    help: 'MX hosts this process sends no SMTP session to now, cooling down after a rate-limit reply (issue 49; EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MS). 0 without SMTP probing.',
    registers: [registry],
    collect() {
      this.set(readCooling?.().hosts ?? 0);
    },
  });
  const chunksStored = new Counter({ name: 'email_job_chunks_stored_total', help: 'Job chunks whose results this process stored.', registers: [registry] });
  const processed = new Counter({ name: 'email_job_addresses_processed_total', help: 'Job addresses whose results this process stored (throughput: rate() of it).', registers: [registry] });
  const expiries = new Counter({ name: 'email_job_lease_expiries_total', help: 'Job chunks this process took over because their lease had run out (their worker died or stalled).', registers: [registry] });
  const finished = new Counter({ name: 'email_jobs_finished_total', help: 'Jobs that reached a final state in this process, by status (completed, failed, cancelled).', labelNames: ['status'], registers: [registry] });
  const webhookAttempts = new Counter({ name: 'email_webhook_deliveries_total', help: 'Webhook delivery attempts this process recorded, by outcome (delivered; retry: failed, due again; dead: failed, retry schedule spent; cancelled: endpoint deleted).', labelNames: ['outcome'], registers: [registry] });
  const webhookDuration = new Histogram({ name: 'email_webhook_delivery_duration_seconds', help: 'Time of webhook delivery attempts, by outcome.', labelNames: ['outcome'], buckets: WEBHOOK_BUCKETS, registers: [registry] });
  const providerLabel = boundedProviderLabels(SMTP_PROVIDER_LABELS);
  new Gauge({
    name: 'email_webhook_deliveries_pending',
    help: 'Webhook deliveries not finished (waiting for their first attempt or a retry), all processes together.',
    registers: [registry],
    async collect() {
      const row = await core.database.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'pending').executeTakeFirst();
      this.set(Number(row?.n ?? 0));
    },
  });
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
    // A lease token marks a worker's claim (a chunk waiting for its greylisting retry has none).
    const late = await core.database.db.selectFrom('job_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'leased').where('lease_token', 'is not', null).where('lease_until', '<', clock().toISOString()).executeTakeFirst();
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
    help: 'Leased job chunks whose lease has run out (their worker died or stalled) and that no worker has taken over yet, all processes together. Take-overs are counted by email_job_lease_expiries_total.',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(state.expired);
    },
  });
  return {
    verified: (result) => verifications.inc({ status: result.status, reason: result.reason ?? 'none' }),
    smtpProbe: (event) => probes.inc({ provider: providerLabel(event.provider, event.mxHost), outcome: event.status }),
    smtpRateLimited: (where) => rateLimited.inc({ provider: providerLabel(where.provider, where.mxHost) }),
    smtpCooling: (read) => {
      readCooling = read;
    },
    smtpEgress: (egress, event) => egressEvents.inc({ egress, event }),
    smtpCache: (hit) => cacheLookups.inc({ result: hit ? 'hit' : 'miss' }),
    smtpSelfCheck: (check) => {
      available.set(check.available === null ? -1 : check.available ? 1 : 0);
      selfCheck.reset();
      for (const e of check.egresses) {
        selfCheck.set({ egress: e.egress, check: 'port25', result: e.port25.status }, 1);
        selfCheck.set({ egress: e.egress, check: 'starttls', result: e.starttls }, 1);
        selfCheck.set({ egress: e.egress, check: 'fcrdns', result: e.fcrdns.status }, 1);
        for (const l of e.blocklists) selfCheck.set({ egress: e.egress, check: `blocklist:${l.zone}`, result: l.status }, 1);
      }
    },
    chunkStored: (addresses) => {
      chunksStored.inc();
      processed.inc(addresses);
    },
    leaseExpired: () => expiries.inc(),
    jobFinished: (status) => finished.inc({ status }),
    webhookAttempt: (outcome, seconds) => {
      webhookAttempts.inc({ outcome });
      webhookDuration.observe({ outcome }, seconds);
    },
  };
}
