/** A quota month: calendar month in UTC. Shared between callers: never modify one. */
export interface QuotaPeriod {
  /** `YYYY-MM`, the key of the month in the ledger. */
  readonly key: string;
  /** First instant of the month, ISO 8601. */
  readonly start: string;
  /** First instant of the next month, ISO 8601 (exclusive end). */
  readonly end: string;
  /** First day of the next month, `YYYY-MM-DD`: when the quota resets. */
  readonly resetDate: string;
}

let last: { from: number; to: number; period: QuotaPeriod } | undefined;

/** The quota month containing `now` (memoised: it is asked several times per request). */
export function quotaPeriod(now: Date): QuotaPeriod {
  const ms = now.getTime();
  if (last && ms >= last.from && ms < last.to) return last.period;
  const period = computePeriod(now);
  last = { from: Date.parse(period.start), to: Date.parse(period.end), period };
  return period;
}

function computePeriod(now: Date): QuotaPeriod {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const start = new Date(Date.UTC(y, m, 1));
  const end = new Date(Date.UTC(y, m + 1, 1));
  return {
    key: start.toISOString().slice(0, 7),
    start: start.toISOString(),
    end: end.toISOString(),
    resetDate: end.toISOString().slice(0, 10),
  };
}

/** A `quota_exceeded` answer's `Retry-After`: whole seconds until the quota month of `now` ends (at least 1). */
export function quotaRetryAfter(now: Date): Record<string, string> {
  return { 'retry-after': String(Math.max(1, Math.ceil((Date.parse(quotaPeriod(now).end) - now.getTime()) / 1000))) };
}
