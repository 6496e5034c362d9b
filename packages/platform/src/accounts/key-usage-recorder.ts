import type { CoreTables } from '../db/core-schema.js';
import type { Database } from '../db/database.js';
import { quotaPeriod } from '../quota/period.js';

interface Pending {
  requests: number;
  lastUsed: string;
  period: string;
}

/**
 * Counts requests per key and remembers when each key was last used, writing them in one
 * transaction per interval instead of one write per request. `last_used` and
 * `requests_this_month` are statistics, not billing: a crash can lose at most one
 * interval of them (quota charges are written synchronously by the ledger).
 */
export class KeyUsageRecorder {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly database: Database<CoreTables>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  record(keyId: string, now = new Date()): void {
    const period = quotaPeriod(now).key;
    const entry = this.pending.get(keyId);
    if (entry && entry.period === period) {
      entry.requests += 1;
      entry.lastUsed = now.toISOString();
    } else {
      // A month boundary inside one interval: write the old month first, keep the new.
      if (entry) this.flush().catch(this.onError);
      this.pending.set(keyId, { requests: 1, lastUsed: now.toISOString(), period });
    }
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush().catch(this.onError);
      }, this.intervalMs);
      this.timer.unref();
    }
  }

  /** Writes everything recorded so far. Safe to call at any time, including shutdown. */
  flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    if (batch.size === 0) return this.flushing;
    // Chain after the previous flush (even a failed one) so writes stay in order.
    this.flushing = this.flushing.catch(() => undefined).then(() =>
      this.database.writeTransaction(async (trx) => {
        for (const [keyId, p] of batch) {
          await trx.updateTable('api_keys').set({ last_used: p.lastUsed }).where('id', '=', keyId).execute();
          await trx
            .insertInto('api_key_usage')
            .values({ key_id: keyId, period: p.period, requests: p.requests })
            .onConflict((oc) => oc.columns(['key_id', 'period']).doUpdateSet((eb) => ({ requests: eb('api_key_usage.requests', '+', eb.ref('excluded.requests')) })))
            .execute();
        }
      }),
    );
    return this.flushing;
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
