import type { CoreTables } from '../db/core-schema.js';
import type { Database } from '../db/database.js';

/** Failed sign-ins allowed per subject (an e-mail address, a client address) within the window. */
export const SIGN_IN_MAX_FAILURES = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Open sign-ups allowed per client address within the same window (each costs a scrypt and makes an account). */
export const SIGN_UPS_PER_ADDRESS = 10;

/** Whether sign-in may be tried now; a refusal says when to retry. A value, not an exception. */
export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Counts failed dashboard sign-ins per subject over a sliding window, in the service's own
 * database: every process of the service sees the same count, and the clock is the
 * caller's. Subjects are `email:<address>` and `ip:<address>`; `signup:<address>` counts
 * open sign-ups (a second instance with its own limit).
 */
export class SignInThrottle {
  constructor(
    private readonly database: Database<CoreTables>,
    private readonly limits: { maxFailures: number; windowMs: number } = { maxFailures: SIGN_IN_MAX_FAILURES, windowMs: SIGN_IN_WINDOW_MS },
  ) {}

  /** Refused when any subject has `maxFailures` failures in the window; retry when the oldest that counts leaves it. */
  async check(subjects: readonly string[], now: Date): Promise<ThrottleDecision> {
    const since = new Date(now.getTime() - this.limits.windowMs).toISOString();
    let retryAt = 0;
    for (const subject of subjects) {
      const rows = await this.database.db
        .selectFrom('sign_in_failures')
        .select('at')
        .where('subject', '=', subject)
        .where('at', '>', since)
        .orderBy('at', 'desc')
        .limit(this.limits.maxFailures)
        .execute();
      if (rows.length < this.limits.maxFailures) continue;
      // Once the oldest of the last `maxFailures` failures leaves the window, one more try is allowed.
      retryAt = Math.max(retryAt, Date.parse(rows[rows.length - 1]!.at) + this.limits.windowMs);
    }
    if (retryAt === 0) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((retryAt - now.getTime()) / 1000)) };
  }

  /** Records one failure against each subject, and forgets failures older than the window. */
  async fail(subjects: readonly string[], now: Date): Promise<void> {
    const at = now.toISOString();
    await this.database.db.insertInto('sign_in_failures').values(subjects.map((subject) => ({ subject, at }))).execute();
    await this.database.db.deleteFrom('sign_in_failures').where('at', '<=', new Date(now.getTime() - this.limits.windowMs).toISOString()).execute();
  }

  /** Forgets a subject's failures (the address after a successful sign-in). */
  async clear(subject: string): Promise<void> {
    await this.database.db.deleteFrom('sign_in_failures').where('subject', '=', subject).execute();
  }
}
