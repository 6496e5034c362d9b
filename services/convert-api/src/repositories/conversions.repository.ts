import type { Selectable } from 'kysely';
import type { Database } from '@mailconv/platform';
import type { ConversionsTable, ConvertTables } from '../db/schema.js';

export type ConversionRow = Selectable<ConversionsTable>;

/** The status values of convert-decisions.md item 6. */
export const CONVERSION_STATUSES = ['queued', 'processing', 'completed', 'failed', 'shredded', 'expired'] as const;
export type ConversionStatus = (typeof CONVERSION_STATUSES)[number];

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

  /** Looks a download up by the SHA-256 of its token (the index never sees the token itself). */
  async findByTokenHash(tokenHash: string): Promise<ConversionRow | undefined> {
    return this.database.db.selectFrom('conversions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /** queued → processing; false when the record moved on meanwhile (shredded). */
  async start(id: string, now: Date): Promise<boolean> {
    const r = await this.database.db.updateTable('conversions').set({ status: 'processing', started_at: now.toISOString() }).where('id', '=', id).where('status', '=', 'queued').executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** processing → completed or failed; false when the record was shredded meanwhile. */
  async finish(
    id: string,
    fields: { status: 'completed' | 'failed'; output: string | null; output_path: string | null; error: string | null; completed_at: string; expires_at: string },
  ): Promise<boolean> {
    const r = await this.database.db.updateTable('conversions').set(fields).where('id', '=', id).where('status', 'in', ['queued', 'processing']).executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** Moves a record to `shredded` or `expired`; the previous row, or undefined if it was already final. */
  async close(id: string, status: 'shredded' | 'expired', now: Date): Promise<ConversionRow | undefined> {
    return this.database.writeTransaction(async (trx) => {
      const row = await trx.selectFrom('conversions').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row || FINAL.includes(row.status as ConversionStatus)) return undefined;
      await trx
        .updateTable('conversions')
        .set({ status, output_path: null, completed_at: row.completed_at ?? now.toISOString() })
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

  /** Records a previous process left queued or processing (it stopped mid-way). */
  async interrupted(): Promise<ConversionRow[]> {
    return this.database.db.selectFrom('conversions').selectAll().where('status', 'in', ['queued', 'processing']).execute();
  }
}
