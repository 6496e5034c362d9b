import { newId, type Database } from '@mailconv/platform';
import type { EmailTables } from '../db/schema.js';

/** A webhook as the API shows it (the secret only in the creation answer). */
export interface WebhookRecord {
  webhook_id: string;
  url: string;
  events: string;
  active: boolean;
  last_triggered: string | null;
  created_at: string;
}

/** At most this many active endpoints per account (contract: 10). */
export const MAX_ACTIVE_WEBHOOKS = 10;

const toRecord = (r: { id: string; url: string; events: string; active: number; last_triggered: string | null; created_at: string }): WebhookRecord => ({
  webhook_id: r.id,
  url: r.url,
  events: r.events,
  active: r.active === 1,
  last_triggered: r.last_triggered,
  created_at: r.created_at,
});

/** Webhook endpoints of accounts. */
export class WebhooksRepository {
  constructor(private readonly database: Database<EmailTables>) {}

  /**
   * Adds an endpoint unless the account already has {@link MAX_ACTIVE_WEBHOOKS} active ones.
   * The count and the insert share one write transaction, so concurrent creations cannot
   * pass the limit together.
   */
  async create(accountId: string, input: { url: string; events: string; secret: string }, now: Date): Promise<WebhookRecord | 'limit_reached'> {
    return this.database.writeTransaction(async (trx) => {
      let lock = trx.selectFrom('accounts').select('id').where('id', '=', accountId);
      if (this.database.dialect === 'postgres') lock = lock.forUpdate();
      await lock.executeTakeFirst();
      const { n } = await trx.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).where('active', '=', 1).executeTakeFirstOrThrow();
      if (Number(n) >= MAX_ACTIVE_WEBHOOKS) return 'limit_reached' as const;
      const row = { id: newId('wh', now.getTime()), account_id: accountId, url: input.url, events: input.events, secret: input.secret, active: 1, created_at: now.toISOString(), last_triggered: null, deleted_at: null };
      await trx.insertInto('webhooks').values(row).execute();
      return toRecord(row);
    });
  }

  async listActive(accountId: string): Promise<WebhookRecord[]> {
    const rows = await this.database.db
      .selectFrom('webhooks')
      .select(['id', 'url', 'events', 'active', 'last_triggered', 'created_at'])
      .where('account_id', '=', accountId)
      .where('active', '=', 1)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Deactivates an active endpoint of the account; false when there is none with that id. */
  async remove(accountId: string, id: string, now: Date): Promise<boolean> {
    const res = await this.database.db
      .updateTable('webhooks')
      .set({ active: 0, deleted_at: now.toISOString() })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('active', '=', 1)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
}
