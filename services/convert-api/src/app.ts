import type { DestinationStream } from 'pino';
import multipart from '@fastify/multipart';
import { Converter } from '@mailconv/converter';
import { createServiceBase, type ReadinessCheck, type ServiceApp, type ServiceIdentity } from '@mailconv/platform';
import { ConversionService } from './conversion/conversion.service.js';
import { JobQueue } from './conversion/job-queue.js';
import type { ConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import type { ConvertTables } from './db/schema.js';
import { planOf, type ConvertDeps } from './deps.js';
import { CONVERT_ERROR_STATUS } from './errors.js';
import { convertPlans } from './plans.js';
import { ConversionsRepository } from './repositories/conversions.repository.js';
import { UploadsRepository } from './repositories/uploads.repository.js';
import { registerAccountRoutes } from './routes/v1/account.route.js';
import { registerConversionRoutes } from './routes/v1/conversions.route.js';
import { registerDownloadRoutes } from './routes/v1/downloads.route.js';
import { registerFormatRoutes } from './routes/v1/formats.route.js';
import { registerUploadRoutes } from './routes/v1/upload.route.js';
import { FileStore } from './storage/file-store.js';
import { KEY_LOCATIONS } from './schemas.js';

/** API key prefix of this service: `cv_live_` + 32 base62 characters. Never valid on the email service. */
export const CONVERT_KEY_PREFIX = 'cv_live_';

export interface ConvertAppOptions {
  /** The clock used for quota months and timestamps; tests move it. */
  clock?: () => Date;
  logStream?: DestinationStream;
  /**
   * A converter to use instead of starting one; the app then leaves it running on close
   * (tests share one warm LibreOffice pool between app instances).
   */
  converter?: Converter;
}

/** Builds the file conversion service: its own database, keys and routes. */
/** What makes this service itself: name, errors, keys, tables. */
const CONVERT_IDENTITY: ServiceIdentity = {
  title: 'File Conversion API',
  version: '1.0.0',
  description: 'Converts files between formats. A separate service from the email verification API.',
  errorTable: CONVERT_ERROR_STATUS,
  keyLocations: KEY_LOCATIONS,
  keyPrefix: CONVERT_KEY_PREFIX,
  redisPrefix: 'convert',
  migrations: CONVERT_MIGRATIONS,
};

export async function buildApp(config: ConvertConfig, options: ConvertAppOptions = {}): Promise<ServiceApp> {
  const plans = convertPlans(config.plansFile);
  const store = new FileStore(config.storageDir);
  await store.init();
  const converter =
    options.converter ??
    (await Converter.create({
      workDir: store.workDir,
      prestart: config.prestart,
      timeoutMs: config.timeoutMs,
      ...(config.libreofficeInstances ? { libreoffice: { instances: config.libreofficeInstances } } : {}),
    }));
  // /readyz reports every engine's probe (binary found, version read) next to the database.
  const readiness: Record<string, ReadinessCheck> = Object.fromEntries(
    converter.probes().map((p) => [
      `engine_${p.engine}`,
      async () => {
        if (!p.available) throw new Error(`${p.engine}: missing ${p.missing.join(', ')}`);
      },
    ]),
  );
  const { app, core, authenticate } = await createServiceBase<ConvertTables>({ config, identity: CONVERT_IDENTITY, readiness, logStream: options.logStream });
  const clock = options.clock ?? (() => new Date());
  const conversions = new ConversionService({
    converter,
    store,
    uploads: new UploadsRepository(core.database),
    conversions: new ConversionsRepository(core.database),
    quota: core.quota,
    queue: new JobQueue(config.maxRunning),
    clock,
    retentionMs: config.retentionMs,
    publicBaseUrl: config.publicBaseUrl,
    log: app.log,
  });
  const deps: ConvertDeps = { core, plans, clock, converter, conversions };
  const interrupted = await conversions.recoverInterrupted();
  if (interrupted) app.log.warn({ interrupted }, 'conversions left unfinished by the previous process marked failed and refunded');

  const sweeper = setInterval(() => {
    conversions.sweep().catch((err: unknown) => app.log.error({ err }, 'retention sweep failed'));
  }, config.sweepIntervalMs);
  sweeper.unref();
  // preClose runs before the platform's onClose closes the database: running conversions
  // are cancelled and their records written first.
  app.addHook('preClose', async () => {
    clearInterval(sweeper);
    await conversions.stop();
    if (!options.converter) await converter.close();
  });

  await app.register(multipart);

  await app.register(async (scope) => {
    scope.addHook('onRequest', authenticate((p) => planOf(deps, p.plan).rateLimitRpm));
    registerAccountRoutes(scope, deps);
    registerUploadRoutes(scope, deps);
    registerConversionRoutes(scope, deps);
    registerDownloadRoutes(scope, deps);
    registerFormatRoutes(scope, deps);
  });
  return app;
}
