// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { ConfigError, createProcessRegistry, DiskSpace, openServiceCore, redactUrlCredentials, serveMetrics } from '@mailconv/platform';
import { pino } from 'pino';
import { closeEmailWriters, composeEmailServices, EMAIL_KEY_PREFIX } from './composition.js';
import { loadEmailConfig, type EmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { registerEmailMetrics } from './metrics.js';

/**
 * `npm run worker -w services/email-api`: a job worker without HTTP, for more verification
 * capacity on a database shared with the API processes (PostgreSQL; those may set
 * `EMAIL_JOBS_WORKERS=0`); it also sends webhook deliveries unless
 * `EMAIL_WEBHOOKS_CONCURRENCY=0`. It claims chunks with leases exactly as the in-process worker
 * does, so any number of them can run and be killed at any time. Chunks at once:
 * `EMAIL_JOBS_WORKERS`, or 2 when that is 0. With `EMAIL_WORKER_METRICS_PORT` it serves its
 * own counters at `GET /metrics` on `EMAIL_HOST`. SIGTERM/SIGINT hand back chunks in flight and exit.
 */
let config: EmailConfig;
try {
  config = loadEmailConfig();
} catch (err) {
  process.stderr.write(`email-worker: ${redactUrlCredentials(err instanceof ConfigError ? err.message : (err as Error).message)}\n`);
  process.exit(1);
}
const log = pino({ level: config.logLevel });
const core = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
const clock = () => new Date();
const registry = config.workerMetricsPort === undefined ? null : createProcessRegistry();
const observer = registry ? registerEmailMetrics(registry, core, clock) : undefined;
if (registry) new DiskSpace({ data: config.dataDir }, config.minFreeBytes).register(registry);
const services = composeEmailServices({ config, core, clock, log, jobWorkers: config.jobs.workers || 2, ...(observer ? { observer } : {}) });
const { worker, queue, dispatcher, smtpCheck } = services;
const metrics = registry ? await serveMetrics(registry, { host: config.host, port: config.workerMetricsPort!, token: config.metricsToken }) : null;
worker!.start();
smtpCheck?.start();
dispatcher?.start();
log.info({ event: 'ready', service: 'email-worker', worker_id: worker!.id, metrics_port: metrics?.port ?? null }, 'email job worker ready');
const shutdown = async () => {
  log.info('shutting down');
  await metrics?.close();
  smtpCheck?.stop();
  await Promise.all([worker!.stop(), dispatcher?.stop()]);
  await queue?.close();
  await closeEmailWriters(services);
  await core.close();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
