/** A quota month: calendar month in UTC. */
export interface QuotaPeriod {
  /** `YYYY-MM`, the key of the month in the ledger. */
  key: string;
  /** First instant of the month, ISO 8601. */
  start: string;
  /** First instant of the next month, ISO 8601 (exclusive end). */
  end: string;
  /** First day of the next month, `YYYY-MM-DD`: when the quota resets. */
  resetDate: string;
}

export function quotaPeriod(now: Date): QuotaPeriod {
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
