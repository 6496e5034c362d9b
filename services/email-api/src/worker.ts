import { openServiceCore, ConfigError } from '@mailconv/platform';
import { pino } from 'pino';
import { EMAIL_KEY_PREFIX, engineFromConfig } from './app.js';
import { loadEmailConfig, type EmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { createJobsRuntime } from './jobs/jobs-runtime.js';
import { DeliveriesRepository } from './repositories/deliveries.repository.js';
import { EventsRepository } from './repositories/events.repository.js';
import { createDispatcher } from './webhooks/runtime.js';
import { VerificationService } from './verification/verification.service.js';

/**
 * `npm run worker -w services/email-api`: a job worker without HTTP, for more verification
 * capacity on a database shared with the API processes (PostgreSQL; those may set
 * `EMAIL_JOBS_WORKERS=0`); it also sends webhook deliveries unless
 * `EMAIL_WEBHOOKS_CONCURRENCY=0`. It claims chunks with leases exactly as the in-process worker
 * does, so any number of them can run and be killed at any time. Chunks at once:
 * `EMAIL_JOBS_WORKERS`, or 2 when that is 0. SIGTERM/SIGINT hand back chunks in flight and exit.
 */
let config: EmailConfig;
try {
  config = loadEmailConfig();
} catch (err) {
  process.stderr.write(`email-worker: ${err instanceof ConfigError ? err.message : (err as Error).message}\n`);
  process.exit(1);
}
const log = pino({ level: config.logLevel });
const core = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
const engine = engineFromConfig(config);
const clock = () => new Date();
const verification = new VerificationService({ verifier: engine.verifier, quota: core.quota, charges: core.charges, clock, smtpAvailable: engine.prober !== null, batchConcurrency: config.batchConcurrency });
const deliveries = new DeliveriesRepository(core.database);
const events = new EventsRepository(core.database, deliveries);
const { worker, queue } = createJobsRuntime({ database: core.database, quota: core.quota, events, verification, clock, config, concurrency: config.jobs.workers || 2, log });
const dispatcher = createDispatcher({ config, deliveries, events, clock, log });
worker!.start();
dispatcher?.start();
log.info({ event: 'ready', service: 'email-worker' }, 'email job worker ready');
const shutdown = async () => {
  log.info('shutting down');
  await Promise.all([worker!.stop(), dispatcher?.stop()]);
  await queue?.close();
  await core.close();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
