import { AppError, newId, quotaPeriod, quotaRetryAfter, type ChargeBatcher, type Principal, type QuotaLedger, type QuotaState } from '@mailconv/platform';
import type { VerificationResult, Verifier, VerifyOptions } from '@mailconv/verifier';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EmailPlan } from '../plans.js';

/**
 * Longest stretch (ms) a batch or chunk verifies before letting the event loop run. With
 * DNS answers cached every verification resolves as a microtask, so without a pause a
 * 10,000-address chunk would hold the loop for its whole length: no request answered, no
 * lease renewed, no cancellation read until it ends.
 */
export const YIELD_EVERY_MS = 5;

export interface QuotaBody {
  limit: number;
  used_this_month: number;
  remaining: number;
}

export interface BatchSummary {
  total: number;
  valid: number;
  invalid: number;
  risky: number;
  unknown: number;
  accuracy: number;
}

export interface BatchAnswer {
  success: true;
  batch_id: string;
  status: 'completed';
  summary: BatchSummary;
  results: VerificationResult[];
  quota: QuotaBody;
}

export interface VerificationServiceDeps {
  verifier: Verifier;
  quota: QuotaLedger;
  /** The ledger's charges coalesced per event-loop turn (requests arriving together share a statement). */
  charges: ChargeBatcher;
  clock: () => Date;
  /** SMTP probing is configured on this server (HELO name and MAIL FROM set). */
  smtpAvailable: boolean;
  /** Whether probing can work now, as the last SMTP self-check found (issue 23); absent: not known. */
  smtpAvailability?: { readonly available: boolean } | null;
  /** Addresses of one batch verified at the same time. */
  batchConcurrency: number;
  /** Told of the addresses verified for an account (the dashboard's daily figures). */
  onCounted?: (accountId: string, count: number, at: Date) => void;
}

const quotaBody = (q: QuotaState): QuotaBody => ({ limit: q.limit, used_this_month: q.used, remaining: q.remaining });

/** Domain of an address as typed, for grouping only (the engine does the real parsing). */
function groupKey(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).trim().toLowerCase();
}

/**
 * Single and batch verification for authenticated callers: plan features, quota charged
 * atomically before any work (and given back if the work fails), then the engine.
 */
export class VerificationService {
  constructor(private readonly deps: VerificationServiceDeps) {}

  /** Refuses `use_smtp` on plans without the feature, or when this server cannot probe. */
  checkSmtp(useSmtp: boolean, plan: EmailPlan | null): void {
    if (!useSmtp) return;
    if (plan && !plan.features.smtp) {
      throw new AppError('feature_not_available', `The ${plan.name} plan does not include SMTP mailbox probing (use_smtp); it starts with the Starter plan.`);
    }
    if (!this.deps.smtpAvailable) {
      throw new AppError('service_unavailable', 'SMTP mailbox probing is not configured on this server (EMAIL_SMTP_HELO and EMAIL_SMTP_FROM).');
    }
  }

  /**
   * The last self-check found no egress reaching port 25: `use_smtp` is answered
   * `smtp_unavailable` at once, without a probe (so the public endpoint charges no SMTP probe).
   */
  smtpKnownUnavailable(): boolean {
    return this.deps.smtpAvailability?.available === false;
  }

  async single(principal: Principal, plan: EmailPlan, email: string, useSmtp: boolean): Promise<{ result: VerificationResult; quota: QuotaBody }> {
    this.checkSmtp(useSmtp, plan);
    const charged = await this.charge(principal, plan, 1);
    const result = await this.refundOnFailure(principal, charged, 1, () => this.deps.verifier.verify(email, { smtp: useSmtp, catchAll: useSmtp && plan.features.catch_all, cacheScope: principal.accountId }));
    this.deps.onCounted?.(principal.accountId, 1, this.deps.clock());
    return { result, quota: quotaBody(charged) };
  }

  async batch(principal: Principal, plan: EmailPlan, emails: readonly string[], useSmtp: boolean): Promise<BatchAnswer> {
    if (emails.length > plan.batchCap) {
      throw new AppError('invalid_request', `The ${plan.name} plan verifies at most ${plan.batchCap} addresses per batch; this one has ${emails.length}. Split it, or use POST /api/v1/jobs.`, { field: 'emails' });
    }
    this.checkSmtp(useSmtp, plan);
    const charged = await this.charge(principal, plan, emails.length);
    const results = await this.refundOnFailure(principal, charged, emails.length, () => this.verifyAll(emails, { smtp: useSmtp, catchAll: useSmtp && plan.features.catch_all, cacheScope: principal.accountId }));
    this.deps.onCounted?.(principal.accountId, emails.length, this.deps.clock());
    return { success: true, batch_id: newId('batch', this.deps.clock().getTime()), status: 'completed', summary: summarise(results), results, quota: quotaBody(charged) };
  }

  /**
   * Lets the event loop run once every {@link YIELD_EVERY_MS} of verification, for every
   * batch and chunk of this process at once: the loop only turns when none of them has
   * work queued as microtasks, so they must all pause together.
   */
  private breather(): Promise<void> | void {
    if (!this.pause && performance.now() - this.lastYield >= YIELD_EVERY_MS) {
      this.pause = nextTurn().then(() => {
        this.pause = null;
        this.lastYield = performance.now();
      });
    }
    return this.pause ?? undefined;
  }

  private lastYield = performance.now();
  private pause: Promise<void> | null = null;

  /** The public endpoint: no account, no quota, and no reuse of SMTP outcomes (no account to scope them to). */
  async anonymous(email: string, useSmtp: boolean): Promise<VerificationResult> {
    this.checkSmtp(useSmtp, null);
    return this.deps.verifier.verify(email, { smtp: useSmtp, catchAll: false });
  }

  private async charge(principal: Principal, plan: EmailPlan, units: number): Promise<QuotaState> {
    const now = this.deps.clock();
    const charged = await this.deps.charges.charge(principal.accountId, units, plan.monthlyQuota, now);
    if (!charged.ok) {
      throw new AppError(
        'quota_exceeded',
        `Monthly quota exceeded: ${units} verification${units === 1 ? '' : 's'} needed, ${charged.remaining} of ${charged.limit} left; it resets on ${quotaPeriod(now).resetDate}. Nothing was charged.`,
        undefined,
        quotaRetryAfter(now),
      );
    }
    return charged;
  }

  private async refundOnFailure<T>(principal: Principal, charged: QuotaState, units: number, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      await this.deps.quota.refundCharge(principal.accountId, charged.period, units);
      throw err;
    }
  }

  /**
   * Verifies every address with bounded concurrency, addresses of one domain next to each
   * other (one DNS lookup per domain through the resolver's shared cache, and SMTP sessions
   * that can be reused), results in input order.
   */
  private async verifyAll(emails: readonly string[], options: VerifyOptions): Promise<VerificationResult[]> {
    return (await this.verifyMany(emails, options, () => false))!;
  }

  /**
   * {@link verifyAll} that can be stopped part-way: once `stop()` is true no further
   * address is started, and the answer is null (bulk jobs, cancelled within a chunk).
   */
  async verifyMany(emails: readonly string[], options: VerifyOptions, stop: () => boolean): Promise<VerificationResult[] | null> {
    if (options.smtp) return this.verifyByDomain(emails, options, stop);
    const keys = emails.map(groupKey);
    const order = emails.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
    const results = new Array<VerificationResult>(emails.length);
    let next = 0;
    let stopped = false;
    const worker = async () => {
      while (next < order.length) {
        if (stop()) {
          stopped = true;
          return;
        }
        const i = order[next++]!;
        results[i] = await this.deps.verifier.verify(emails[i]!, options);
        await this.breather();
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.batchConcurrency, order.length) }, worker));
    return stopped || stop() ? null : results;
  }

  /**
   * With SMTP probing (issue 23): `batchConcurrency` domains at a time, every address of a
   * domain at once, so each domain is one `probeMany` (its addresses share sessions) and
   * many domains, hence many MX hosts, are probed side by side. A worker pool over the
   * sorted list would hold only the two or three domains its 64 slots cover, and wait for
   * the slowest. The prober's per-host and per-provider limits bound the sessions.
   */
  private async verifyByDomain(emails: readonly string[], options: VerifyOptions, stop: () => boolean): Promise<VerificationResult[] | null> {
    const groups = new Map<string, number[]>();
    emails.forEach((email, i) => {
      const key = groupKey(email);
      const group = groups.get(key);
      if (group) group.push(i);
      else groups.set(key, [i]);
    });
    const queue = [...groups.values()];
    const results = new Array<VerificationResult>(emails.length);
    let next = 0;
    let stopped = false;
    const worker = async () => {
      while (next < queue.length) {
        if (stop()) {
          stopped = true;
          return;
        }
        const group = queue[next++]!;
        await Promise.all(group.map(async (i) => (results[i] = await this.deps.verifier.verify(emails[i]!, options))));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.batchConcurrency, queue.length) }, worker));
    return stopped || stop() ? null : results;
  }
}

/** Decision 13: counts per status and the mean confidence, one decimal. */
export function summarise(results: readonly VerificationResult[]): BatchSummary {
  const s: BatchSummary = { total: results.length, valid: 0, invalid: 0, risky: 0, unknown: 0, accuracy: 0 };
  let confidence = 0;
  for (const r of results) {
    s[r.status] += 1;
    confidence += r.confidence;
  }
  s.accuracy = results.length ? Math.round((confidence / results.length) * 10) / 10 : 0;
  return s;
}
