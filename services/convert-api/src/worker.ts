// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { ConfigError, createProcessRegistry, DiskSpace, openServiceCore, redactUrlCredentials, serveMetrics } from '@mailconv/platform';
import { pino } from 'pino';
import { CONVERT_KEY_PREFIX } from './app.js';
import { loadConvertConfig, type ConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import type { ConvertTables } from './db/schema.js';
import { registerConvertMetrics } from './metrics.js';
import { createConvertRuntime, missingEngines, openEngines } from './runtime.js';

/**
 * A conversion worker without HTTP (`CONVERT_ROLE=worker`): more conversion capacity on the
 * database, storage folder and Redis shared with the API processes. It claims conversions
 * with leases exactly as a process of role `all` does, so any number of workers can run and
 * be killed at any time; it also takes its turn at the retention sweep. With
 * `CONVERT_WORKER_METRICS_PORT` it serves its own counters at `GET /metrics` on
 * `CONVERT_HOST`. SIGTERM/SIGINT hand
 * the conversions in flight back (queued again at once) and exit.
 */
let config: ConvertConfig;
try {
  config = loadConvertConfig();
} catch (err) {
  process.stderr.write(`convert-worker: ${redactUrlCredentials(err instanceof ConfigError ? err.message : (err as Error).message)}\n`);
  process.exit(1);
}
const log = pino({ level: config.logLevel });
const core = await openServiceCore<ConvertTables>({ database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
const engines = await openEngines(config);
for (const { engine, message } of missingEngines(engines.converter)) log.warn({ engine }, message);
const registry = config.workerMetricsPort === undefined ? null : createProcessRegistry();
const metricHooks = registry ? registerConvertMetrics(registry, core, engines.converter.libreoffice?.pool.stats ?? null, engines.converter.chromium?.pool ?? null) : undefined;
const disk = new DiskSpace({ data: config.dataDir, storage: config.storageDir }, config.minFreeBytes);
if (registry) disk.register(registry);
const runtime = createConvertRuntime({ config, core, engines, disk, clock: () => new Date(), log, ...(metricHooks ?? {}) });
const metrics = registry ? await serveMetrics(registry, { host: config.host, port: config.workerMetricsPort!, token: config.metricsToken }) : null;
runtime.start();
log.info({ event: 'ready', service: 'convert-worker', worker_id: runtime.worker!.id, max_running: config.maxRunning, metrics_port: metrics?.port ?? null }, 'conversion worker ready');
let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  log.info('shutting down');
  await metrics?.close();
  await runtime.stop();
  await core.close();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
