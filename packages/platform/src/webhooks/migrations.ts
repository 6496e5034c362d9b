import type { Kysely } from 'kysely';

/**
 * The webhook tables' migration steps. Each service runs them under its own migration
 * names (the email service's date from before the move; the conversion service's from when
 * it gained webhooks), so one definition makes the same tables in both databases.
 */
export const webhookMigrationSteps = {
  /** The outbox: one row per event, its payload the exact bytes every attempt sends. */
  async createEvents(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('events_account_idx').on('events').columns(['account_id', 'created_at']).execute();
  },

  async dropEvents(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('events').ifExists().execute();
  },

  /** An account's endpoints. */
  async createWebhooks(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_triggered', 'text')
      .addColumn('deleted_at', 'text')
      .execute();
    await db.schema.createIndex('webhooks_account_idx').on('webhooks').columns(['account_id', 'active']).execute();
  },

  async dropWebhooks(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('webhooks').ifExists().execute();
  },

  /** One delivery per event and endpoint, and every attempt of each. */
  async createDeliveries(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull().references('events.id').onDelete('cascade'))
      .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text')
      .addColumn('lease_token', 'text')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .addUniqueConstraint('webhook_deliveries_event_webhook', ['event_id', 'webhook_id'])
      .execute();
    await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
    await db.schema
      .createTable('webhook_attempts')
      .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('next_retry_at', 'text')
      .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
      .execute();
  },

  async dropDeliveries(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('webhook_attempts').ifExists().execute();
    await db.schema.dropTable('webhook_deliveries').ifExists().execute();
  },

  /** Per-request targets: the account's signing identity (`scope = 'request'`) and each delivery's own URL. */
  async addRequestTargets(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('webhooks').addColumn('scope', 'text', (c) => c.notNull().defaultTo('endpoint')).execute();
    await db.schema.alterTable('webhook_deliveries').addColumn('target_url', 'text').execute();
  },

  async dropRequestTargets(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('webhook_deliveries').dropColumn('target_url').execute();
    await db.schema.alterTable('webhooks').dropColumn('scope').execute();
  },
};
