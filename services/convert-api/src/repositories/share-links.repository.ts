import type { Database } from '@mailconv/platform';
import type { Selectable } from 'kysely';
import type { ConvertTables, ShareLinksTable } from '../db/schema.js';
import type { ConversionRow } from './conversions.repository.js';

export type ShareLinkRow = Selectable<ShareLinksTable>;

/** Share links of conversions' outputs (extension, issue 24). */
export class ShareLinksRepository {
  constructor(private readonly database: Database<ConvertTables>) {}

  async insert(row: ShareLinkRow): Promise<void> {
    await this.database.db.insertInto('share_links').values(row).execute();
  }

  /** The links of one of the account's conversions, newest first. */
  async ofConversion(accountId: string, conversionId: string): Promise<ShareLinkRow[]> {
    return this.database.db
      .selectFrom('share_links')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('conversion_id', '=', conversionId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** Revokes a live link of the account's conversion; the row as it now is, or undefined when there is no such link. */
  async revoke(accountId: string, conversionId: string, id: string, now: Date): Promise<ShareLinkRow | undefined> {
    await this.database.db
      .updateTable('share_links')
      .set({ revoked_at: now.toISOString() })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('conversion_id', '=', conversionId)
      .where('revoked_at', 'is', null)
      .execute();
    return this.database.db.selectFrom('share_links').selectAll().where('id', '=', id).where('account_id', '=', accountId).where('conversion_id', '=', conversionId).executeTakeFirst();
  }

  /** The link with this token hash and its conversion, if any. */
  async findByTokenHash(tokenHash: string): Promise<{ link: ShareLinkRow; conversion: ConversionRow } | undefined> {
    const link = await this.database.db.selectFrom('share_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    if (!link) return undefined;
    const conversion = await this.database.db.selectFrom('conversions').selectAll().where('id', '=', link.conversion_id).executeTakeFirst();
    return conversion ? { link, conversion } : undefined;
  }
}
