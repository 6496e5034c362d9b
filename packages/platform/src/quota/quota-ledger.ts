import type { CompiledQuery, Kysely } from 'kysely';
import { reusableQuery } from '../db/reusable-query.js';
import type { Database } from '../db/database.js';
import type { CoreTables } from '../db/core-schema.js';
import { newId } from '../ids.js';
import { quotaPeriod } from './period.js';

/** The state of an account's month after (or instead of) a charge. */
export interface QuotaState {
  period: string;
  limit: number;
  used: number;
  remaining: number;
}

/** Denials are values, not exceptions: the caller decides which error the user sees. */
export type ChargeResult = ({ ok: true } | { ok: false; required: number }) & QuotaState;
export type ReserveResult = ({ ok: true; reservationId: string } | { ok: false; required: number }) & QuotaState;
export type RefundResult = { ok: true; refunded: number } | { ok: false; reason: 'not_found' | 'exceeds_reservation' };

type Executor = Kysely<CoreTables>;

/**
 * The monthly quota ledger. Every change is one conditional UPDATE (`used + n <= limit`),
 * which both engines apply atomically under concurrency: SQLite holds the single write
 * lock, PostgreSQL re-checks the condition on the locked row. No read-then-write races,
 * so no account goes over its limit and no unit is lost.
 */
interface ChargeValues {
  accountId: string;
  period: string;
  units: number;
  limit: number;
}

export class QuotaLedger {
  /** The charge statement, built once per executor kind (the same SQL serves a transaction). */
  private readonly chargeQuery: (v: ChargeValues) => CompiledQuery<{ used: number }>;

  constructor(private readonly database: Database<CoreTables>) {
    this.chargeQuery = reusableQuery(
      (v: ChargeValues) =>
        database.db
          .insertInto('quota_usage')
          .values({ account_id: v.accountId, period: v.period, used: v.units })
          .onConflict((oc) =>
            oc
              .columns(['account_id', 'period'])
              .doUpdateSet((eb) => ({ used: eb('quota_usage.used', '+', v.units) }))
              .where((eb) => eb(eb('quota_usage.used', '+', v.units), '<=', v.limit)),
          )
          .returning('used'),
      { accountId: '\u0000account', period: '\u0000period', units: -987_654_321, limit: -123_456_789 },
    );
  }

  /** Charges `units` to the month of `now` if they fit under `limit`. */
  async charge(accountId: string, units: number, limit: number, now = new Date(), exec?: Executor): Promise<ChargeResult> {
    assertUnits(units);
    return this.apply(exec ?? this.database.db, accountId, units, limit, quotaPeriod(now).key);
  }

  /**
   * Reserves `units` (they count as used at once) and records the reservation so that the
   * unused part can be refunded later. Pass the transaction that stores the work the
   * reservation pays for, so both commit or neither does.
   */
  async reserve(accountId: string, units: number, limit: number, now = new Date(), exec?: Executor): Promise<ReserveResult> {
    assertUnits(units);
    const run = async (trx: Executor): Promise<ReserveResult> => {
      const period = quotaPeriod(now).key;
      const charged = await this.apply(trx, accountId, units, limit, period);
      if (!charged.ok) return charged;
      const reservationId = newId('rsv', now.getTime());
      await trx
        .insertInto('quota_reservations')
        .values({ id: reservationId, account_id: accountId, period, units, refunded: 0, created_at: now.toISOString() })
        .execute();
      return { ...charged, reservationId };
    };
    return exec ? run(exec) : this.database.writeTransaction(run);
  }

  /**
   * Gives back `units` of a reservation to the month it was charged to. The running total
   * of refunds can never exceed the reservation, so a refund retried after a crash cannot
   * give back a unit twice.
   */
  async refund(reservationId: string, units: number, exec?: Executor): Promise<RefundResult> {
    assertUnits(units);
    const run = async (trx: Executor): Promise<RefundResult> => {
      const row = await trx
        .updateTable('quota_reservations')
        .set((eb) => ({ refunded: eb('refunded', '+', units) }))
        .where('id', '=', reservationId)
        .where((eb) => eb(eb('refunded', '+', units), '<=', eb.ref('units')))
        .returning(['account_id', 'period'])
        .executeTakeFirst();
      if (!row) {
        const exists = await trx.selectFrom('quota_reservations').select('id').where('id', '=', reservationId).executeTakeFirst();
        return { ok: false, reason: exists ? 'exceeds_reservation' : 'not_found' };
      }
      await trx
        .updateTable('quota_usage')
        .set((eb) => ({ used: eb('used', '-', units) }))
        .where('account_id', '=', row.account_id)
        .where('period', '=', row.period)
        .execute();
      return { ok: true, refunded: units };
    };
    return exec ? run(exec) : this.database.writeTransaction(run);
  }

  /**
   * Gives back `units` of a plain charge (not a reservation) to `period`, e.g. when the
   * work it paid for failed before producing anything. Never takes `used` below zero.
   */
  async refundCharge(accountId: string, period: string, units: number, exec?: Executor): Promise<void> {
    assertUnits(units);
    await (exec ?? this.database.db)
      .updateTable('quota_usage')
      .set((eb) => ({ used: eb.case().when('used', '>=', units).then(eb('used', '-', units)).else(0).end() }))
      .where('account_id', '=', accountId)
      .where('period', '=', period)
      .execute();
  }

  /** Units used in the month of `now`. */
  async used(accountId: string, now = new Date(), exec?: Executor): Promise<number> {
    const row = await (exec ?? this.database.db)
      .selectFrom('quota_usage')
      .select('used')
      .where('account_id', '=', accountId)
      .where('period', '=', quotaPeriod(now).key)
      .executeTakeFirst();
    return row?.used ?? 0;
  }

  /**
   * One statement: insert the month's row with `units`, or add `units` to it only if the
   * result stays within `limit`. No row back means the charge did not fit.
   */
  private async apply(exec: Executor, accountId: string, units: number, limit: number, period: string): Promise<ChargeResult> {
    const row = units <= limit ? (await exec.executeQuery(this.chargeQuery({ accountId, period, units, limit }))).rows[0] : undefined;
    if (row) return { ok: true, period, limit, used: row.used, remaining: Math.max(0, limit - row.used) };
    const used = (await exec.selectFrom('quota_usage').select('used').where('account_id', '=', accountId).where('period', '=', period).executeTakeFirst())?.used ?? 0;
    return { ok: false, required: units, period, limit, used, remaining: Math.max(0, limit - used) };
  }
}

function assertUnits(units: number): void {
  if (!Number.isSafeInteger(units) || units < 0) throw new RangeError(`quota units must be a non-negative integer, got ${units}`);
}
