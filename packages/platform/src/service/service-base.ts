import type { CoreTables } from '../db/core-schema.js';
import { createServiceApp, type ServiceApp, type ServiceAppOptions } from '../http/create-app.js';
import { registerHealthRoutes, type ReadinessCheck } from '../http/health.js';
import type { RouteIndex } from '../http/route-index.js';
import { createRateLimiter, type RateLimiter } from '../ratelimit/rate-limiter.js';
import { openServiceCore, type ServiceCore, type ServiceCoreOptions } from './service-core.js';

/**
 * What both services start from: the database opened and migrated, the shared HTTP kit,
 * `/healthz` and `/readyz` (database plus any extra checks), and shutdown that flushes
 * buffered usage and closes the database when the app closes.
 */
export async function createServiceBase<DB extends CoreTables>(options: {
  app: ServiceAppOptions;
  core: Omit<ServiceCoreOptions, 'onBackgroundError'>;
  readiness?: Record<string, ReadinessCheck>;
  /** Redis shared by the service's processes for rate limits; in-process when absent. */
  redisUrl?: string | undefined;
  /** Prefix of the service's keys in a shared Redis. */
  redisPrefix: string;
}): Promise<{ app: ServiceApp; routes: RouteIndex; core: ServiceCore<DB>; limiter: RateLimiter }> {
  let log: ((err: unknown) => void) | undefined;
  const core = await openServiceCore<DB>({ ...options.core, onBackgroundError: (err) => log?.(err) });
  try {
    const { app, routes } = await createServiceApp(options.app);
    log = (err) => app.log.error({ err }, 'background write failed');
    const limiter = createRateLimiter({ keyPrefix: options.redisPrefix, redisUrl: options.redisUrl, onStoreError: (err) => app.log.warn({ err }, 'rate-limit store error; counting in memory') });
    // Until Redis answers, limits are counted per process; say so rather than fail to start.
    await limiter.ready().catch((err: unknown) => app.log.warn({ err }, 'rate-limit store not ready; counting in memory until it is'));
    registerHealthRoutes(app, { database: () => core.database.ping(), ...(options.readiness ?? {}) });
    app.addHook('onClose', async () => {
      await limiter.close();
      await core.close();
    });
    return { app, routes, core, limiter };
  } catch (err) {
    await core.close();
    throw err;
  }
}
