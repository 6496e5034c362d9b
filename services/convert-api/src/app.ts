import type { DestinationStream } from 'pino';
import multipart from '@fastify/multipart';
import type { Converter, EngineProbe } from '@mailconv/converter';
import { createRateLimiter, createServiceBase, dashboardBuildDir, registerDashboard, registerApiKeyRoutes, registerDashboardSessionRoutes, registerWebhookRoutes, type ReadinessCheck, type ServiceApp, type ServiceIdentity } from '@mailconv/platform';
import type { ConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import type { ConvertTables } from './db/schema.js';
import { planOf, type ConvertDeps } from './deps.js';
import { CONVERT_ERROR_STATUS } from './errors.js';
import { convertPlans } from './plans.js';
import { registerDashboardConversionRoutes } from './routes/dashboard/conversions.route.js';
import { registerAccountRoutes } from './routes/v1/account.route.js';
import { registerConversionRoutes } from './routes/v1/conversions.route.js';
import { registerDownloadRoutes, registerSharedDownloadRoute } from './routes/v1/downloads.route.js';
import { registerShareLinkRoutes } from './routes/v1/share-links.route.js';
import { registerSigningCertificateRoutes } from './routes/v1/signing-certificates.route.js';
import { registerFormatRoutes } from './routes/v1/formats.route.js';
import { registerUploadRoutes } from './routes/v1/upload.route.js';
import { registerConvertMetrics } from './metrics.js';
import { createConvertRuntime, missingEngineMessage, missingEngines, openEngines } from './runtime.js';
import { KEY_LOCATIONS, SECURED, errors, secured } from './schemas.js';

import { CONVERT_KEY_PREFIX } from './key-prefix.js';

export { CONVERT_KEY_PREFIX };

export interface ConvertAppOptions {
  /** The clock used for quota months and timestamps; tests move it. */
  clock?: () => Date;
  logStream?: DestinationStream;
  /**
   * A converter to use instead of starting one; the app then leaves it running on close
   * (tests share one warm LibreOffice pool between app instances).
   */
  converter?: Converter;
  /** The built dashboard served under /dashboard/; packages/dashboard's build when absent. */
  dashboardDir?: string;
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
  sessionCookie: 'cv_session',
  redisPrefix: 'convert',
  migrations: CONVERT_MIGRATIONS,
};

export async function buildApp(config: ConvertConfig, options: ConvertAppOptions = {}): Promise<ServiceApp> {
  const plans = convertPlans(config.plansFile);
  const engines = await openEngines(config, options.converter);
  const { converter } = engines;
  // /readyz reports every engine's probe (binary found, version read) next to the database. A
  // missing engine is looked for again (at most once a minute), so installing it is enough.
  const readiness: Record<string, ReadinessCheck> = Object.fromEntries(
    converter.probes().map(({ engine }) => [
      `engine_${engine}`,
      async () => {
        const probe = (): EngineProbe | undefined => converter.probes().find((p) => p.engine === engine);
        if (probe()?.available) return;
        await converter.refreshProbes();
        const now = probe();
        if (!now?.available) throw new Error(missingEngineMessage(now?.warning ?? `${engine} disabled`, engine));
      },
    ]),
  );
  const clock = options.clock ?? (() => new Date());
  const base = await createServiceBase<ConvertTables>({ config, identity: CONVERT_IDENTITY, readiness, folders: { storage: config.storageDir }, logStream: options.logStream, clock });
  const { app, core } = base;
  for (const { engine, message } of missingEngines(converter)) app.log.warn({ engine }, message);
  const { onFinished, onSecurityEvent } = registerConvertMetrics(app.metrics.registry, core, converter.libreoffice?.pool.stats ?? null, converter.chromium?.pool ?? null);
  const runtime = createConvertRuntime({ config, core, engines, disk: base.disk, clock, log: app.log, onFinished, onSecurityEvent });
  const deps: ConvertDeps = { core, plans, clock, converter, conversions: runtime.conversions };
  runtime.start();
  // preClose runs before the platform's onClose closes the database: running conversions
  // are handed back (queued again for the next process) first.
  app.addHook('preClose', async () => runtime.stop());

  // Share links download without a key: counted per client address, outside the keyed scope.
  const sharedLimiter = createRateLimiter({ keyPrefix: 'convert:shared', redisUrl: config.redisUrl });
  app.addHook('onClose', async () => sharedLimiter.close());
  registerSharedDownloadRoute(app, runtime.shareLinks, { perMinute: config.shareRpm, limiter: sharedLimiter });
  // Signing-certificate uploads, counted per account on top of the plan's limit (issue 45).
  const certificateLimiter = createRateLimiter({ keyPrefix: 'convert:signing-uploads', redisUrl: config.redisUrl });
  app.addHook('onClose', async () => certificateLimiter.close());
  registerDashboard(app, options.dashboardDir ?? dashboardBuildDir('convert'));
  await app.register(multipart);

  registerDashboardSessionRoutes(app, {
    auth: base.dashboardAuth,
    cookieName: CONVERT_IDENTITY.sessionCookie,
    secureCookie: config.dashboard.secureCookie,
    signupPlan: config.dashboard.signup ? plans.defaultPlan : null,
    errors,
  });

  await app.register(async (scope) => {
    base.protect(scope, (p) => planOf(deps, p.plan).rateLimitRpm);
    registerAccountRoutes(scope, deps);
    registerApiKeyRoutes(scope, { apiKeys: base.apiKeys, keyPrefix: CONVERT_KEY_PREFIX, security: SECURED, errors, secured, extension: true });
    // Completion webhooks on every plan (extension, issue 24): the email service's routes and rules.
    registerWebhookRoutes(scope, { webhooks: runtime.webhooks.service, authorize: () => undefined, security: SECURED, errors, secured, extension: true, requestTargets: true });
    registerUploadRoutes(scope, deps);
    registerConversionRoutes(scope, deps);
    registerDownloadRoutes(scope, deps);
    registerShareLinkRoutes(scope, deps, runtime.shareLinks);
    registerSigningCertificateRoutes(scope, runtime.signing, { perMinute: config.signingUploadRpm, limiter: certificateLimiter });
    registerFormatRoutes(scope, deps);
    registerDashboardConversionRoutes(scope, deps);
  });
  return app;
}
