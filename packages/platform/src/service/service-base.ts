import type { Migration } from 'kysely';
import type { DestinationStream } from 'pino';
import type { Principal } from '../accounts/accounts.repository.js';
import type { CommonServiceConfig } from '../config/service-config.js';
import type { CoreTables } from '../db/core-schema.js';
import type { ErrorTable } from '../errors/app-error.js';
import { apiKeyAuth, type KeyLocation } from '../http/auth.js';
import { createServiceApp, type ServiceApp } from '../http/create-app.js';
import { registerHealthRoutes, type ReadinessCheck } from '../http/health.js';
import type { RouteIndex } from '../http/route-index.js';
import { createRateLimiter, type RateLimiter } from '../ratelimit/rate-limiter.js';
import { openServiceCore, type ServiceCore } from './service-core.js';

/** What makes a service itself: its name in documents, errors, keys and tables. */
export interface ServiceIdentity {
  title: string;
  description: string;
  version: string;
  errorTable: ErrorTable;
  /** Where the service accepts API keys; documented as security schemes. */
  keyLocations: readonly KeyLocation[];
  /** Prefix of its API keys (`ev_live_`, `cv_live_`): a key of one service is malformed for the other. */
  keyPrefix: string;
  /** Prefix of its keys in a shared Redis. */
  redisPrefix: string;
  /** Its own migrations; the core ones are added. */
  migrations: Record<string, Migration>;
}

/** A service's starting point, plus the hook that authenticates and rate-limits its API routes. */
export interface ServiceBase<DB extends CoreTables> {
  app: ServiceApp;
  routes: RouteIndex;
  core: ServiceCore<DB>;
  limiter: RateLimiter;
  /** The onRequest hook of authenticated routes: API key, then the account's per-minute limit. */
  authenticate(perMinute: (principal: Principal) => number): ReturnType<typeof apiKeyAuth>;
}

/**
 * What both services start from: the database opened and migrated, the shared HTTP kit,
 * `/healthz` and `/readyz` (database plus any extra checks), rate limits (memory or Redis),
 * and shutdown that flushes buffered usage and closes the database when the app closes.
 */
export async function createServiceBase<DB extends CoreTables>(options: {
  config: CommonServiceConfig;
  identity: ServiceIdentity;
  readiness?: Record<string, ReadinessCheck>;
  logStream?: DestinationStream | undefined;
}): Promise<ServiceBase<DB>> {
  const { config, identity } = options;
  let log: ((err: unknown) => void) | undefined;
  const core = await openServiceCore<DB>({ database: config.database, migrations: identity.migrations, keyPrefix: identity.keyPrefix, onBackgroundError: (err) => log?.(err) });
  try {
    const { app, routes } = await createServiceApp({
      title: identity.title,
      version: identity.version,
      description: identity.description,
      errorTable: identity.errorTable,
      logLevel: config.logLevel,
      bodyLimit: config.bodyLimitBytes,
      trustProxy: config.trustProxy,
      keyLocations: identity.keyLocations,
      timeouts: config.http,
      metricsToken: config.metricsToken,
      ...(options.logStream ? { logStream: options.logStream } : {}),
    });
    log = (err) => app.log.error({ err }, 'background write failed');
    const limiter = createRateLimiter({ keyPrefix: identity.redisPrefix, redisUrl: config.redisUrl, onStoreError: (err) => app.log.warn({ err }, 'rate-limit store error; counting in memory') });
    // Until Redis answers, limits are counted per process; say so rather than fail to start.
    await limiter.ready().catch((err: unknown) => app.log.warn({ err }, 'rate-limit store not ready; counting in memory until it is'));
    // Redis is checked only when configured; rate limits then fall back to memory, but a
    // load balancer should know the processes no longer share limits (nor, with BullMQ, a queue).
    registerHealthRoutes(app, { database: () => core.database.ping(), ...(limiter.shared ? { redis: () => limiter.ping() } : {}), ...(options.readiness ?? {}) });
    app.addHook('onClose', async () => {
      await limiter.close();
      await core.close();
    });
    return {
      app,
      routes,
      core,
      limiter,
      authenticate: (perMinute) => apiKeyAuth({ accounts: core.accounts, usage: core.keyUsage, accept: identity.keyLocations, rateLimit: { limiter, perMinute } }),
    };
  } catch (err) {
    await core.close();
    throw err;
  }
}
