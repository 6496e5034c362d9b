import { TurnBatcher } from '../batching/turn-batcher.js';
import { quotaPeriod } from './period.js';
import type { ChargeResult, QuotaLedger } from './quota-ledger.js';

interface ChargeCall {
  accountId: string;
  units: number;
  limit: number;
  now: Date;
}

/**
 * Quota charges of the request path, coalesced: the charges one account makes in the same
 * event-loop turn are applied as one conditional UPDATE of their sum. When the sum fits,
 * every call is charged and told the `used` it would have seen had the calls run one after
 * the other in arrival order; when it does not, the calls are charged one by one in that
 * order, exactly as without coalescing. A charge is committed before its promise resolves,
 * so nothing is answered on a charge that a crash could lose.
 */
export class ChargeBatcher {
  /** Calls and statements so far (how much coalescing saved). */
  readonly stats = { calls: 0, statements: 0 };

  private readonly batcher = new TurnBatcher<ChargeCall, ChargeResult>((_key, calls) => this.apply(calls));

  constructor(private readonly ledger: QuotaLedger) {}

  /** Charges `units` to the month of `now` if they fit under `limit` (as {@link QuotaLedger.charge}). */
  charge(accountId: string, units: number, limit: number, now = new Date()): Promise<ChargeResult> {
    if (!Number.isSafeInteger(units) || units < 0) return Promise.reject(new RangeError(`quota units must be a non-negative integer, got ${units}`));
    this.stats.calls += 1;
    return this.batcher.add(`${accountId}\u0000${quotaPeriod(now).key}\u0000${limit}`, { accountId, units, limit, now });
  }

  private async apply(calls: ChargeCall[]): Promise<ChargeResult[]> {
    const first = calls[0]!;
    const total = calls.reduce((sum, c) => sum + c.units, 0);
    this.stats.statements += 1;
    const together = await this.ledger.charge(first.accountId, total, first.limit, first.now);
    if (together.ok) {
      let used = together.used - total;
      return calls.map((c) => {
        used += c.units;
        return { ok: true, period: together.period, limit: together.limit, used, remaining: Math.max(0, together.limit - used) };
      });
    }
    if (calls.length === 1) return [together];
    const results: ChargeResult[] = [];
    for (const c of calls) {
      this.stats.statements += 1;
      results.push(await this.ledger.charge(c.accountId, c.units, c.limit, c.now));
    }
    return results;
  }
}
