import type { Kysely, Migration } from 'kysely';
import { webhookMigrationSteps } from '@mailconv/platform';

/** The conversion service's own migrations (the platform adds the core ones). Names are timestamps. */
export const CONVERT_MIGRATIONS: Record<string, Migration> = {
  '2026_11_21_1500_uploads_and_conversions': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('uploads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('deleted_at', 'text')
        .execute();
      await db.schema.createIndex('uploads_expiry_idx').on('uploads').columns(['deleted_at', 'expires_at']).execute();
      await db.schema
        .createTable('conversions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('upload_id', 'text', (c) => c.notNull().references('uploads.id'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('target_format', 'text', (c) => c.notNull())
        .addColumn('options', 'text', (c) => c.notNull())
        .addColumn('output', 'text')
        .addColumn('output_path', 'text')
        .addColumn('download_token', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('error', 'text')
        .addColumn('quota_period', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('completed_at', 'text')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('conversions_upload_idx').on('conversions').column('upload_id').execute();
      await db.schema.createIndex('conversions_status_expiry_idx').on('conversions').columns(['status', 'expires_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('conversions').ifExists().execute();
      await db.schema.dropTable('uploads').ifExists().execute();
    },
  },
  '2026_11_22_1700_conversion_leases': {
    // Scale-out: a running conversion holds a lease its process renews; a conversion whose
    // lease expired is retried once. `account_limit` is the plan's max_concurrent_jobs when
    // the conversion was accepted, enforced across processes at claim time.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('conversions').addColumn('lease_owner', 'text').execute();
      await db.schema.alterTable('conversions').addColumn('lease_until', 'text').execute();
      await db.schema.alterTable('conversions').addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('conversions').addColumn('account_limit', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.createIndex('conversions_claim_idx').on('conversions').columns(['status', 'created_at']).execute();
      await db.schema.createIndex('conversions_account_status_idx').on('conversions').columns(['account_id', 'status']).execute();
      // Work that must run in one process at a time (the retention sweeper), by lease.
      await db.schema
        .createTable('maintenance_leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('lease_until', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('maintenance_leases').ifExists().execute();
      await db.schema.dropIndex('conversions_account_status_idx').ifExists().execute();
      await db.schema.dropIndex('conversions_claim_idx').ifExists().execute();
      for (const column of ['account_limit', 'attempts', 'lease_until', 'lease_owner']) await db.schema.alterTable('conversions').dropColumn(column).execute();
    },
  },
  '2026_11_27_0600_upload_source_url': {
    // Pages fetched from a URL are rendered at their own address (issue 22).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('uploads').addColumn('source_url', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('uploads').dropColumn('source_url').execute();
    },
  },
  '2026_11_27_0900_webhooks': {
    // Signed completion webhooks (issue 24): the platform's outbox tables, as the email service has them.
    async up(db: Kysely<unknown>) {
      await webhookMigrationSteps.createEvents(db);
      await webhookMigrationSteps.createWebhooks(db);
      await webhookMigrationSteps.createDeliveries(db);
      await webhookMigrationSteps.addRequestTargets(db);
      await db.schema.alterTable('conversions').addColumn('webhook_url', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('conversions').dropColumn('webhook_url').execute();
      await webhookMigrationSteps.dropDeliveries(db);
      await webhookMigrationSteps.dropWebhooks(db);
      await webhookMigrationSteps.dropEvents(db);
    },
  },
  '2026_11_27_1000_share_links': {
    // Share links (issue 24): a conversion's output downloadable without a key until expiry or revocation.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('share_links')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('conversion_id', 'text', (c) => c.notNull().references('conversions.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('share_links_conversion_idx').on('share_links').columns(['conversion_id', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('share_links').ifExists().execute();
    },
  },
  '2026_11_27_1100_conversion_units': {
    // Batches (issue 24): a conversion may be charged several units (one per file of its archive).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('conversions').addColumn('units', 'integer', (c) => c.notNull().defaultTo(1)).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('conversions').dropColumn('units').execute();
    },
  },
  '2026_11_27_1200_conversion_exports': {
    // Exports to S3-compatible storage (issue 24): the target and outcome (no credentials), and the credentials sealed until the export ran.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('conversions').addColumn('export', 'text').execute();
      await db.schema.alterTable('conversions').addColumn('export_credentials', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('conversions').dropColumn('export_credentials').execute();
      await db.schema.alterTable('conversions').dropColumn('export').execute();
    },
  },
  '2026_11_28_0000_signing_certificates': {
    // Account signing certificates (issue 25): the key and certificates sealed; the facts shown in the clear.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('signing_certificates')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('not_before', 'text', (c) => c.notNull())
        .addColumn('not_after', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('signing_certificates_account_idx').on('signing_certificates').columns(['account_id', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('signing_certificates').ifExists().execute();
    },
  },
};
