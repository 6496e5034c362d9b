import type { DestinationStream } from 'pino';
import { apiKeyAuth, createServiceBase, type ServiceApp } from '@mailconv/platform';
import type { ConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import type { ConvertTables } from './db/schema.js';
import { planOf, type ConvertDeps } from './deps.js';
import { CONVERT_ERROR_STATUS } from './errors.js';
import { convertPlans } from './plans.js';
import { registerAccountRoutes } from './routes/v1/account.route.js';
import { KEY_LOCATIONS } from './schemas.js';

/** API key prefix of this service: `cv_live_` + 32 base62 characters. Never valid on the email service. */
export const CONVERT_KEY_PREFIX = 'cv_live_';

export interface ConvertAppOptions {
  /** The clock used for quota months and timestamps; tests move it. */
  clock?: () => Date;
  logStream?: DestinationStream;
}

/** Builds the file conversion service: its own database, keys and routes. */
export async function buildApp(config: ConvertConfig, options: ConvertAppOptions = {}): Promise<ServiceApp> {
  const plans = convertPlans(config.plansFile);
  const { app, core, limiter } = await createServiceBase<ConvertTables>({
    app: {
      title: 'File Conversion API',
      version: '1.0.0',
      description: 'Converts files between formats. A separate service from the email verification API.',
      errorTable: CONVERT_ERROR_STATUS,
      logLevel: config.logLevel,
      bodyLimit: config.bodyLimitBytes,
      trustProxy: config.trustProxy,
      keyLocations: KEY_LOCATIONS,
      ...(options.logStream ? { logStream: options.logStream } : {}),
    },
    redisUrl: config.redisUrl,
    redisPrefix: 'convert',
    core: { database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX },
  });
  const deps: ConvertDeps = { core, plans, clock: options.clock ?? (() => new Date()) };

  await app.register(async (scope) => {
    scope.addHook(
      'onRequest',
      apiKeyAuth({ accounts: core.accounts, usage: core.keyUsage, accept: KEY_LOCATIONS, rateLimit: { limiter, perMinute: (p) => planOf(deps, p.plan).rateLimitRpm } }),
    );
    registerAccountRoutes(scope, deps);
  });
  return app;
}
