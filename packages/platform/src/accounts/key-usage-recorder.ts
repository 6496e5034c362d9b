import type { CoreTables } from '../db/core-schema.js';
import type { Database } from '../db/database.js';
import { quotaPeriod } from '../quota/period.js';

interface Pending {
  keyId: string;
  requests: number;
  lastUsed: string;
  period: string;
}

/** Keys counted at most between two writes that succeed: a longer outage keeps counting the keys it has. */
const MAX_PENDING = 100_000;

/**
 * Counts requests per key and remembers when each key was last used, writing them in one
 * transaction per interval instead of one write per request. `last_used` and
 * `requests_this_month` are statistics, not billing (quota charges are written
 * synchronously by the ledger). A write that fails (the database unreachable, its disk
 * full) keeps its counts and is tried again at the next interval, merged with what came
 * since (issue 28): an outage delays them, it does not drop them. What a crash loses is at
 * most the counts not yet written: one interval, or the length of an outage.
 */
export class KeyUsageRecorder {
  /** Counts not yet written, by key and month. */
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly database: Database<CoreTables>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  record(keyId: string, now = new Date()): void {
    const period = quotaPeriod(now).key;
    const id = `${keyId}\u0000${period}`;
    const entry = this.pending.get(id);
    if (entry) {
      entry.requests += 1;
      entry.lastUsed = now.toISOString();
    } else if (this.pending.size < MAX_PENDING) {
      this.pending.set(id, { keyId, requests: 1, lastUsed: now.toISOString(), period });
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(this.onError);
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Counts recorded but not yet written (kept across failed writes). */
  pendingRequests(): number {
    let n = 0;
    for (const p of this.pending.values()) n += p.requests;
    return n;
  }

  /** Writes everything recorded so far; a failed write keeps it for the next try. Safe to call at any time, including shutdown. */
  flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    if (batch.size === 0) return this.flushing;
    // Chain after the previous flush (even a failed one) so writes stay in order.
    this.flushing = this.flushing.catch(() => undefined).then(async () => {
      try {
        await this.database.writeTransaction(async (trx) => {
          for (const p of batch.values()) {
            await trx.updateTable('api_keys').set({ last_used: p.lastUsed }).where('id', '=', p.keyId).where((eb) => eb.or([eb('last_used', 'is', null), eb('last_used', '<', p.lastUsed)])).execute();
            await trx
              .insertInto('api_key_usage')
              .values({ key_id: p.keyId, period: p.period, requests: p.requests })
              .onConflict((oc) => oc.columns(['key_id', 'period']).doUpdateSet((eb) => ({ requests: eb('api_key_usage.requests', '+', eb.ref('excluded.requests')) })))
              .execute();
          }
        });
      } catch (err) {
        this.keep(batch);
        throw err;
      }
    });
    return this.flushing;
  }

  /** Puts a batch whose write failed back in front of what was counted since, and tries again later. */
  private keep(batch: Map<string, Pending>): void {
    for (const [id, p] of this.pending) {
      const earlier = batch.get(id);
      if (earlier) {
        earlier.requests += p.requests;
        earlier.lastUsed = p.lastUsed;
      } else if (batch.size < MAX_PENDING) {
        batch.set(id, p);
      }
    }
    this.pending = batch;
    if (!this.closed) this.schedule();
  }

  /** Stops the timer and writes what is pending (once; what still cannot be written is lost with the process, and the error says so). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
