import { sql, type Kysely, type Migration } from 'kysely';
import { webhookMigrationSteps } from '@mailconv/platform';

/** The email service's own migrations (the platform adds the core ones). Names are timestamps. */
export const EMAIL_MIGRATIONS: Record<string, Migration> = {
  '2026_11_21_1500_idempotency_and_events': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
      await webhookMigrationSteps.createEvents(db);
    },
    async down(db: Kysely<unknown>) {
      await webhookMigrationSteps.dropEvents(db);
      await db.schema.dropTable('idempotency_keys').ifExists().execute();
    },
  },
  '2026_11_21_1600_jobs': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('processed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('valid_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('invalid_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('risky_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('unknown_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('use_smtp', 'integer', (c) => c.notNull())
        .addColumn('catch_all', 'integer', (c) => c.notNull())
        .addColumn('chunk_size', 'integer', (c) => c.notNull())
        .addColumn('chunk_count', 'integer', (c) => c.notNull())
        .addColumn('reservation_id', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('completed_at', 'text')
        .addCheckConstraint('jobs_processed_bounds', sql`processed >= 0 AND processed <= total`)
        .execute();
      await db.schema.createIndex('jobs_account_idx').on('jobs').columns(['account_id', 'created_at']).execute();
      await db.schema.createIndex('jobs_status_idx').on('jobs').columns(['status', 'created_at']).execute();
      await db.schema
        .createTable('job_chunks')
        .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
        .addColumn('idx', 'integer', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('emails', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_token', 'text')
        .addColumn('lease_until', 'text')
        .addColumn('results', 'text')
        .addPrimaryKeyConstraint('job_chunks_pk', ['job_id', 'idx'])
        .execute();
      await db.schema.createIndex('job_chunks_state_idx').on('job_chunks').columns(['state', 'job_id', 'idx']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('job_chunks').ifExists().execute();
      await db.schema.dropTable('jobs').ifExists().execute();
    },
  },
  '2026_11_21_1700_webhooks': { up: webhookMigrationSteps.createWebhooks, down: webhookMigrationSteps.dropWebhooks },
  '2026_11_21_1800_webhook_deliveries': { up: webhookMigrationSteps.createDeliveries, down: webhookMigrationSteps.dropDeliveries },
  '2026_11_22_1900_verification_days': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('verification_days')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('verifications', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('verification_days_pk', ['account_id', 'day'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('verification_days').ifExists().execute();
    },
  },
  '2026_11_27_0900_webhook_request_targets': { up: webhookMigrationSteps.addRequestTargets, down: webhookMigrationSteps.dropRequestTargets },
  // Issue 23: a CSV upload's own columns, and results deleted on request or by retention.
  '2026_11_27_2100_job_input_rows': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('jobs').addColumn('input_header', 'text').execute();
      await db.schema.alterTable('jobs').addColumn('input_width', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('jobs').addColumn('results_deleted_at', 'text').execute();
      await db.schema.alterTable('job_chunks').addColumn('input_rows', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('job_chunks').dropColumn('input_rows').execute();
      for (const column of ['results_deleted_at', 'input_width', 'input_header']) await db.schema.alterTable('jobs').dropColumn(column).execute();
    },
  },
  '2026_11_28_0900_smtp_outcomes': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('smtp_outcomes')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('smtp_outcomes_expiry_idx').on('smtp_outcomes').column('expires_at').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('smtp_outcomes').ifExists().execute();
    },
  },
};
