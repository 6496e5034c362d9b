import type { Database } from '@mailconv/platform';
import type { SmtpOutcomeStore } from '@mailconv/verifier';
import type { EmailTables } from '../db/schema.js';

/** Rows written per statement (3 parameters each: well inside SQLite's and PostgreSQL's limits). */
const ROWS_PER_INSERT = 500;

/**
 * The SMTP outcome cache in the service's database (decision 28): every process on the
 * database shares it. Reads go straight to the table; writes are gathered and written once
 * per interval in one transaction, so a job probing hundreds of addresses a second does not
 * pay a write per address on its path. Expired rows are deleted at most once per
 * `pruneEveryMs`, by whichever process writes (an idempotent delete: safe from many).
 * A cache, not a record: a crash loses at most one interval of outcomes.
 */
export class SmtpOutcomesRepository implements SmtpOutcomeStore {
  private pending = new Map<string, { outcome: string; expiresAt: string }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;

  constructor(
    private readonly database: Database<EmailTables>,
    private readonly options: { intervalMs: number; pruneEveryMs: number; clock: () => Date; onError: (err: unknown) => void },
  ) {}

  async get(key: string, now: Date): Promise<string | null> {
    const at = now.toISOString();
    const waiting = this.pending.get(key);
    if (waiting && waiting.expiresAt > at) return waiting.outcome;
    const row = await this.database.db.selectFrom('smtp_outcomes').select('outcome').where('key', '=', key).where('expires_at', '>', at).executeTakeFirst();
    return row?.outcome ?? null;
  }

  put(key: string, outcome: string, expiresAt: Date): void {
    this.pending.set(key, { outcome, expiresAt: expiresAt.toISOString() });
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(this.options.onError);
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Writes what was put so far (chained, so writes stay in order), and prunes when due. */
  flush(): Promise<void> {
    const batch = [...this.pending];
    this.pending = new Map();
    const now = this.options.clock();
    const prune = now.getTime() - this.lastPrune >= this.options.pruneEveryMs;
    if (batch.length === 0 && !prune) return this.flushing;
    if (prune) this.lastPrune = now.getTime();
    this.flushing = this.flushing
      .catch(() => undefined)
      .then(() =>
        this.database.writeTransaction(async (trx) => {
          for (let i = 0; i < batch.length; i += ROWS_PER_INSERT) {
            const rows = batch.slice(i, i + ROWS_PER_INSERT).map(([key, v]) => ({ key, outcome: v.outcome, expires_at: v.expiresAt }));
            await trx
              .insertInto('smtp_outcomes')
              .values(rows)
              .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ outcome: eb.ref('excluded.outcome'), expires_at: eb.ref('excluded.expires_at') })))
              .execute();
          }
          if (prune) await trx.deleteFrom('smtp_outcomes').where('expires_at', '<=', now.toISOString()).execute();
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
