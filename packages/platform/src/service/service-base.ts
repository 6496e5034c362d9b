import type { CoreTables } from '../db/core-schema.js';
import { createServiceApp, type ServiceApp, type ServiceAppOptions } from '../http/create-app.js';
import { registerHealthRoutes, type ReadinessCheck } from '../http/health.js';
import type { RouteIndex } from '../http/route-index.js';
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
}): Promise<{ app: ServiceApp; routes: RouteIndex; core: ServiceCore<DB> }> {
  let log: ((err: unknown) => void) | undefined;
  const core = await openServiceCore<DB>({ ...options.core, onBackgroundError: (err) => log?.(err) });
  try {
    const { app, routes } = await createServiceApp(options.app);
    log = (err) => app.log.error({ err }, 'background write failed');
    registerHealthRoutes(app, { database: () => core.database.ping(), ...(options.readiness ?? {}) });
    app.addHook('onClose', async () => core.close());
    return { app, routes, core };
  } catch (err) {
    await core.close();
    throw err;
  }
}
