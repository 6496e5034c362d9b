import type { Database } from '../db/database.js';
import { newId } from '../ids.js';
import type { Kysely } from 'kysely';
import type { CoreTables } from '../db/core-schema.js';
import type { WebhookTables } from './schema.js';

type Tables = WebhookTables & Pick<CoreTables, 'accounts'>;

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
  constructor(private readonly database: Database<Tables>) {}

  /** Serialises an account's webhook writes (PostgreSQL: a row lock; SQLite's write transaction is one already). */
  private async lockAccount(trx: Kysely<Tables>, accountId: string): Promise<void> {
    let lock = trx.selectFrom('accounts').select('id').where('id', '=', accountId);
    if (this.database.dialect === 'postgres') lock = lock.forUpdate();
    await lock.executeTakeFirst();
  }

  /**
   * Adds an endpoint unless the account already has {@link MAX_ACTIVE_WEBHOOKS} active ones.
   * The count and the insert share one write transaction, so concurrent creations cannot
   * pass the limit together.
   */
  async create(accountId: string, input: { url: string; events: string; secret: string }, now: Date): Promise<WebhookRecord | 'limit_reached'> {
    return this.database.writeTransaction(async (trx) => {
      await this.lockAccount(trx, accountId);
      const { n } = await trx
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('active', '=', 1)
        .where('scope', '=', 'endpoint')
        .executeTakeFirstOrThrow();
      if (Number(n) >= MAX_ACTIVE_WEBHOOKS) return 'limit_reached' as const;
      const row = { id: newId('wh', now.getTime()), account_id: accountId, url: input.url, events: input.events, secret: input.secret, active: 1, scope: 'endpoint' as const, created_at: now.toISOString(), last_triggered: null, deleted_at: null };
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
      .where('scope', '=', 'endpoint')
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
      .where('scope', '=', 'endpoint')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** The account's per-request signing identity (id and creation time), if it has one. */
  async requestIdentity(accountId: string): Promise<{ webhook_id: string; created_at: string } | undefined> {
    const row = await this.database.db.selectFrom('webhooks').select(['id', 'created_at']).where('account_id', '=', accountId).where('scope', '=', 'request').where('active', '=', 1).executeTakeFirst();
    return row ? { webhook_id: row.id, created_at: row.created_at } : undefined;
  }

  /**
   * Gives the account's per-request identity a new signing secret, creating the identity on
   * first use (one per account: the lock and the lookup share a write transaction).
   * Deliveries not yet sent are signed with the new secret.
   */
  async setRequestSecret(accountId: string, secret: string, now: Date): Promise<{ webhook_id: string; created_at: string }> {
    return this.database.writeTransaction(async (trx) => {
      await this.lockAccount(trx, accountId);
      const existing = await trx.selectFrom('webhooks').select(['id', 'created_at']).where('account_id', '=', accountId).where('scope', '=', 'request').where('active', '=', 1).executeTakeFirst();
      if (existing) {
        await trx.updateTable('webhooks').set({ secret }).where('id', '=', existing.id).execute();
        return { webhook_id: existing.id, created_at: existing.created_at };
      }
      const row = { id: newId('wh', now.getTime()), account_id: accountId, url: '', events: '', secret, active: 1, scope: 'request' as const, created_at: now.toISOString(), last_triggered: null, deleted_at: null };
      await trx.insertInto('webhooks').values(row).execute();
      return { webhook_id: row.id, created_at: row.created_at };
    });
  }
}
