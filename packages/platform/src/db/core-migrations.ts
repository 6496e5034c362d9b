import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Migrations of the core tables. Names are timestamps so that platform and service
 * migrations interleave in the order they were written.
 */
export const CORE_MIGRATIONS: Record<string, Migration> = {
  '2026_11_21_1400_core_accounts': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_preview', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute();
      await db.schema
        .createTable('api_key_usage')
        .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
        .addColumn('period', 'text', (c) => c.notNull())
        .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('api_key_usage_pk', ['key_id', 'period'])
        .execute();
      await db.schema
        .createTable('quota_usage')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('period', 'text', (c) => c.notNull())
        .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('quota_usage_pk', ['account_id', 'period'])
        .addCheckConstraint('quota_usage_used_nonneg', sql`used >= 0`)
        .execute();
      await db.schema
        .createTable('quota_reservations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('period', 'text', (c) => c.notNull())
        .addColumn('units', 'integer', (c) => c.notNull())
        .addColumn('refunded', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addCheckConstraint('quota_reservations_refund_bounds', sql`refunded >= 0 AND refunded <= units`)
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['quota_reservations', 'quota_usage', 'api_key_usage', 'api_keys', 'accounts']) {
        await db.schema.dropTable(t).ifExists().execute();
      }
    },
  },
  '2026_11_22_1900_dashboard_auth': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('account_passwords')
        .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('dashboard_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('dashboard_sessions_account_idx').on('dashboard_sessions').column('account_id').execute();
      await db.schema.createIndex('dashboard_sessions_expiry_idx').on('dashboard_sessions').column('expires_at').execute();
      await db.schema
        .createTable('sign_in_failures')
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sign_in_failures_subject_idx').on('sign_in_failures').columns(['subject', 'at']).execute();
      await db.schema.createIndex('sign_in_failures_at_idx').on('sign_in_failures').column('at').execute();
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['sign_in_failures', 'dashboard_sessions', 'account_passwords']) await db.schema.dropTable(t).ifExists().execute();
    },
  },
  '2026_11_25_1700_readiness_probe': {
    // One row each process rewrites when asked whether it is ready: a database that can
    // answer but not write (a full disk) is not ready (issue 28).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('readiness_probe')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('written_at', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('readiness_probe').ifExists().execute();
    },
  },
};
