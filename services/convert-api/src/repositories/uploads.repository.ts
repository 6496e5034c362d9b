import type { Selectable } from 'kysely';
import type { Database } from '@mailconv/platform';
import type { ConvertTables, UploadsTable } from '../db/schema.js';

export type UploadRow = Selectable<UploadsTable>;

/** Uploaded source files of every account. */
export class UploadsRepository {
  constructor(private readonly database: Database<ConvertTables>) {}

  async insert(row: UploadRow): Promise<void> {
    await this.database.db.insertInto('uploads').values(row).execute();
  }

  /** The account's upload; another account's is `undefined` (the API answers 404 for both). */
  async find(accountId: string, id: string): Promise<UploadRow | undefined> {
    return this.database.db.selectFrom('uploads').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async markDeleted(id: string, now: Date): Promise<void> {
    await this.database.db.updateTable('uploads').set({ deleted_at: now.toISOString() }).where('id', '=', id).where('deleted_at', 'is', null).execute();
  }

  /** Which of `ids` have a row, and whether it is deleted (the reconciliation pass). */
  async byIds(ids: readonly string[]): Promise<Pick<UploadRow, 'id' | 'deleted_at'>[]> {
    if (!ids.length) return [];
    return this.database.db.selectFrom('uploads').select(['id', 'deleted_at']).where('id', 'in', ids).execute();
  }

  /** Uploads whose bytes are still on disk after their expiry. */
  async expired(now: Date, limit = 500): Promise<UploadRow[]> {
    return this.database.db.selectFrom('uploads').selectAll().where('deleted_at', 'is', null).where('expires_at', '<=', now.toISOString()).limit(limit).execute();
  }
}
