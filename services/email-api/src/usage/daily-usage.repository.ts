import type { Kysely } from 'kysely';
import type { Database } from '@mailconv/platform';
import type { EmailTables } from '../db/schema.js';

type Exec = Kysely<EmailTables>;

/** The UTC day of an instant, `YYYY-MM-DD`. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** Verifications per account and UTC day (`verification_days`). */
export class DailyUsageRepository {
  constructor(private readonly database: Database<EmailTables>) {}

  /** Adds `count` to the account's day; `exec` is the caller's transaction when there is one. */
  async add(accountId: string, day: string, count: number, exec: Exec = this.database.db): Promise<void> {
    await exec
      .insertInto('verification_days')
      .values({ account_id: accountId, day, verifications: count })
      .onConflict((oc) => oc.columns(['account_id', 'day']).doUpdateSet((eb) => ({ verifications: eb('verification_days.verifications', '+', eb.ref('excluded.verifications')) })))
      .execute();
  }

  /** The account's days from `from` to `to` (inclusive, `YYYY-MM-DD`) that had verifications. */
  async between(accountId: string, from: string, to: string): Promise<Array<{ day: string; verifications: number }>> {
    const rows = await this.database.db.selectFrom('verification_days').select(['day', 'verifications']).where('account_id', '=', accountId).where('day', '>=', from).where('day', '<=', to).orderBy('day').execute();
    return rows.map((r) => ({ day: r.day, verifications: Number(r.verifications) }));
  }
}

/**
 * Counts single and batch verifications per account and day in memory and writes them
 * once per interval (one statement per request would cost the hot path a write). A
 * statistic, not billing: a crash loses at most one interval; the quota ledger is exact.
 * Job chunks are counted in their own transaction (jobs.service.ts).
 */
export class DailyUsageRecorder {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repository: DailyUsageRepository,
    private readonly database: Database<EmailTables>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  record(accountId: string, count: number, at: Date): void {
    const key = `${accountId} ${utcDay(at)}`;
    this.pending.set(key, (this.pending.get(key) ?? 0) + count);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(this.onError);
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Writes everything recorded so far (chained, so writes stay in order). */
  flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    if (batch.size === 0) return this.flushing;
    this.flushing = this.flushing.catch(() => undefined).then(() =>
      this.database.writeTransaction(async (trx) => {
        for (const [key, count] of batch) {
          const [accountId, day] = key.split(' ') as [string, string];
          await this.repository.add(accountId, day, count, trx);
        }
      }),
    );
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
