import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import type { Database } from '@mailconv/platform';
import type { ConversionsTable, ConvertTables } from '../db/schema.js';

export type ConversionRow = Selectable<ConversionsTable>;

/** The status values of convert-decisions.md item 6. */
export const CONVERSION_STATUSES = ['queued', 'processing', 'completed', 'failed', 'shredded', 'expired'] as const;
export type ConversionStatus = (typeof CONVERSION_STATUSES)[number];

/** The record as long as `owner` still holds its lease on a running conversion. */
function held(id: string, owner: string) {
  return (eb: ExpressionBuilder<ConvertTables, 'conversions'>) => eb.and([eb('id', '=', id), eb('lease_owner', '=', owner), eb('status', '=', 'processing')]);
}

/** Statuses after which nothing changes a record any more. */
const FINAL: readonly ConversionStatus[] = ['shredded', 'expired'];

/** Conversions (and jobs: the same resource) of every account. */
export class ConversionsRepository {
  constructor(private readonly database: Database<ConvertTables>) {}

  async insert(row: ConversionRow): Promise<void> {
    await this.database.db.insertInto('conversions').values(row).execute();
  }

  /** The account's conversion; another account's is `undefined` (404 either way). */
  async find(accountId: string, id: string): Promise<ConversionRow | undefined> {
    return this.database.db.selectFrom('conversions').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  /** The account's most recent conversions, newest first (the dashboard's list). */
  async recent(accountId: string, limit: number): Promise<ConversionRow[]> {
    return this.database.db.selectFrom('conversions').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Looks a download up by the SHA-256 of its token (the index never sees the token itself). */
  async findByTokenHash(tokenHash: string): Promise<ConversionRow | undefined> {
    return this.database.db.selectFrom('conversions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /**
   * Leases the oldest claimable conversion (or `target`, when it is claimable) for `owner`:
   * `queued`, or `processing` under a lease that expired (its process died) and not yet
   * tried `maxAttempts` times, of an account with fewer than its `account_limit`
   * conversions running under a live lease. The claim and the account's count are taken
   * under the account's lock (PostgreSQL; SQLite writes are serial anyway), so processes
   * claiming at once never run more than the limit. Null when there is nothing to claim.
   */
  async claim(owner: string, now: Date, leaseMs: number, maxAttempts: number, target?: string): Promise<ConversionRow | null> {
    const nowIso = now.toISOString();
    const claimable = sql<boolean>`(c.status = 'queued' or (c.status = 'processing' and c.lease_until < ${nowIso})) and c.attempts < ${maxAttempts}`;
    const underLimit = sql<boolean>`(select count(*) from conversions r where r.account_id = c.account_id and r.status = 'processing' and r.lease_until >= ${nowIso}) < c.account_limit`;
    return this.database.writeTransaction(async (trx) => {
      let query = trx.selectFrom('conversions as c').selectAll('c').where(claimable).where(underLimit).orderBy('c.created_at').orderBy('c.id').limit(1);
      if (target) query = query.where('c.id', '=', target);
      if (this.database.dialect === 'postgres') query = query.forUpdate().skipLocked();
      const row = await query.executeTakeFirst();
      if (!row) return null;
      if (this.database.dialect === 'postgres') {
        // Another process may have claimed for this account since our snapshot: count again under its lock.
        await sql`select pg_advisory_xact_lock(hashtext(${`convert-account:${row.account_id}`}))`.execute(trx);
        const still = await trx.selectFrom('conversions as c').select('c.id').where('c.id', '=', row.id).where(underLimit).executeTakeFirst();
        if (!still) return null;
      }
      const leased = {
        status: 'processing',
        lease_owner: owner,
        lease_until: new Date(now.getTime() + leaseMs).toISOString(),
        attempts: row.attempts + 1,
        started_at: row.started_at ?? nowIso,
      };
      const r = await trx.updateTable('conversions').set(leased).where('id', '=', row.id).where('attempts', '=', row.attempts).executeTakeFirst();
      return r.numUpdatedRows > 0n ? { ...row, ...leased } : null;
    });
  }

  /** Extends `owner`'s lease; false when it was lost (expired and taken over) or the record moved on (shredded). */
  async renew(id: string, owner: string, until: Date): Promise<boolean> {
    const r = await this.database.db.updateTable('conversions').set({ lease_until: until.toISOString() }).where(held(id, owner)).executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /**
   * processing → completed or failed, by the lease holder only; false when the lease was
   * lost or the record shredded meanwhile. `within` runs in the same transaction once the
   * record has changed (the webhook event: both commit or neither does).
   */
  async finish(
    id: string,
    owner: string,
    fields: { status: 'completed' | 'failed'; output: string | null; output_path: string | null; error: string | null; completed_at: string; expires_at: string; export?: string | null },
    within?: (trx: Kysely<ConvertTables>) => Promise<unknown>,
  ): Promise<boolean> {
    return this.database.writeTransaction(async (trx) => {
      const r = await trx
        .updateTable('conversions')
        // An export's credentials are kept only until the conversion's outcome is stored.
        .set({ ...fields, lease_owner: null, lease_until: null, export_credentials: null })
        .where(held(id, owner))
        .executeTakeFirst();
      if (r.numUpdatedRows === 0n) return false;
      await within?.(trx);
      return true;
    });
  }

  /** Hands a conversion back unfinished (graceful shutdown): queued again at once, the attempt not counted. */
  async release(id: string, owner: string): Promise<boolean> {
    const r = await this.database.db
      .updateTable('conversions')
      .set((eb) => ({ status: 'queued', lease_owner: null, lease_until: null, started_at: null, attempts: eb('attempts', '-', 1) }))
      .where(held(id, owner))
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** The holder lets go of a conversion that was shredded under it, once its engine stopped and its output is gone. */
  async dropLease(id: string, owner: string): Promise<void> {
    await this.database.db.updateTable('conversions').set({ lease_owner: null, lease_until: null }).where('id', '=', id).where('lease_owner', '=', owner).execute();
  }

  /** The account's oldest conversion waiting to run (offered when one of its slots frees). */
  async nextQueued(accountId: string): Promise<Pick<ConversionRow, 'id'> | undefined> {
    return this.database.db.selectFrom('conversions').select('id').where('account_id', '=', accountId).where('status', '=', 'queued').orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  }

  /** Status, lease and stored output of each of `ids` that has a row (the reconciliation pass). */
  async byIds(ids: readonly string[]): Promise<Pick<ConversionRow, 'id' | 'status' | 'lease_until' | 'output_path'>[]> {
    if (!ids.length) return [];
    return this.database.db.selectFrom('conversions').select(['id', 'status', 'lease_until', 'output_path']).where('id', 'in', ids).execute();
  }

  /** Status and lease of a conversion (waiting for it from another process). */
  async state(id: string): Promise<Pick<ConversionRow, 'status' | 'lease_owner' | 'lease_until'> | undefined> {
    return this.database.db.selectFrom('conversions').select(['status', 'lease_owner', 'lease_until']).where('id', '=', id).executeTakeFirst();
  }

  /**
   * Conversions whose lease expired after their last allowed attempt (their process died
   * twice) become `failed`; the rows so failed are returned, for their refunds.
   */
  async failAbandoned(now: Date, maxAttempts: number, fields: { error: string; expires_at: string }, within?: (trx: Kysely<ConvertTables>, row: ConversionRow) => Promise<unknown>): Promise<ConversionRow[]> {
    const nowIso = now.toISOString();
    const rows = await this.database.db
      .selectFrom('conversions')
      .selectAll()
      .where('status', '=', 'processing')
      .where('lease_until', '<', nowIso)
      .where('attempts', '>=', maxAttempts)
      .limit(100)
      .execute();
    const failed: ConversionRow[] = [];
    for (const row of rows) {
      const changed = await this.database.writeTransaction(async (trx) => {
        const r = await trx
          .updateTable('conversions')
          .set({ status: 'failed', error: fields.error, expires_at: fields.expires_at, completed_at: nowIso, lease_owner: null, lease_until: null, output: null, output_path: null, export_credentials: null })
          .where('id', '=', row.id)
          .where('status', '=', 'processing')
          .where('lease_until', '<', nowIso)
          .executeTakeFirst();
        if (r.numUpdatedRows === 0n) return false;
        await within?.(trx, row);
        return true;
      });
      if (changed) failed.push(row);
    }
    return failed;
  }

  /** Moves a record to `shredded` or `expired`; the previous row, or undefined if it was already final. */
  async close(id: string, status: 'shredded' | 'expired', now: Date): Promise<ConversionRow | undefined> {
    return this.database.writeTransaction(async (trx) => {
      let query = trx.selectFrom('conversions').selectAll().where('id', '=', id);
      // The row lock makes a claim made at the same moment either finish first (we then see
      // `processing` and its holder, and stop it) or not happen at all; without it a shred
      // could read `queued` while a worker was claiming, and leave that worker running.
      if (this.database.dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      if (!row || FINAL.includes(row.status as ConversionStatus)) return undefined;
      await trx
        .updateTable('conversions')
        .set({ status, output_path: null, completed_at: row.completed_at ?? now.toISOString(), export_credentials: null })
        .where('id', '=', id)
        .execute();
      return row;
    });
  }

  /** Live conversions of the same upload (shred removes the shared upload; their records learn of it). */
  async liveOfUpload(uploadId: string): Promise<ConversionRow[]> {
    return this.database.db.selectFrom('conversions').selectAll().where('upload_id', '=', uploadId).where('status', 'not in', FINAL).execute();
  }

  /** Records past their expiry that are not final yet (queued/processing ones are left to finish). */
  async expired(now: Date, limit = 500): Promise<ConversionRow[]> {
    return this.database.db
      .selectFrom('conversions')
      .selectAll()
      .where('status', 'in', ['completed', 'failed'])
      .where('expires_at', '<=', now.toISOString())
      .limit(limit)
      .execute();
  }
}
