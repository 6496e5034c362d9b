import type { Migration } from 'kysely';
import type { DestinationStream } from 'pino';
import type { Principal } from '../accounts/accounts.repository.js';
import type { CommonServiceConfig } from '../config/service-config.js';
import { dirname } from 'node:path';
import type { CoreTables } from '../db/core-schema.js';
import type { Database } from '../db/database.js';
import { ApiKeysService } from '../accounts/api-keys.service.js';
import { DashboardAuthService } from '../dashboard/dashboard-auth.service.js';
import type { ErrorTable } from '../errors/app-error.js';
import { apiKeyAuth, type KeyLocation } from '../http/auth.js';
import { createServiceApp, type ServiceApp } from '../http/create-app.js';
import { registerHealthRoutes, type ReadinessCheck, type ReadinessSection } from '../http/health.js';
import type { RouteIndex } from '../http/route-index.js';
import { createRateLimiter, type RateLimiter } from '../ratelimit/rate-limiter.js';
import { DiskSpace } from './disk-space.js';
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
  /** Name of its dashboard session cookie (`ev_session`, `cv_session`). */
  sessionCookie: string;
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
  /** The onRequest hook of authenticated routes: API key or dashboard session (with CSRF), then the account's per-minute limit. */
  authenticate(perMinute: (principal: Principal) => number): ReturnType<typeof apiKeyAuth>;
  /**
   * Makes every route registered in `scope` authenticated ({@link authenticate}) and
   * documents, on each state-changing one, the 403 `forbidden` a session request without
   * its CSRF token gets.
   */
  protect(scope: ServiceApp, perMinute: (principal: Principal) => number): void;
  /** Dashboard sign-in, sign-up and sign-out. */
  dashboardAuth: DashboardAuthService;
  /** The account's own API keys (dashboard). */
  apiKeys: ApiKeysService;
  /** Free space of the service's folders against its floor (readiness, metrics, upload refusals). */
  disk: DiskSpace;
}

/** Rewrites the readiness row: throws when the database cannot answer or cannot write. */
async function writeProbe(database: Database<CoreTables>): Promise<void> {
  const written_at = new Date().toISOString();
  await database.writeTransaction((trx) =>
    trx.insertInto('readiness_probe').values({ id: 1, written_at }).onConflict((oc) => oc.column('id').doUpdateSet({ written_at })).execute(),
  );
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const CSRF_403 = 'Forbidden: a request made with the dashboard session cookie lacks its `X-CSRF-Token` (`forbidden`), or another refusal named by the code.';

/** Adds a 403 response, shaped like the route's documented 401, to a state-changing route that lacks one. */
function documentCsrfRefusal(route: { method: string | string[]; schema?: { response?: Record<string | number, unknown> } }): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const responses = route.schema?.response;
  if (!responses || !methods.some((m) => STATE_CHANGING.has(m.toUpperCase())) || responses[403] || !responses[401]) return;
  const unauthorized = responses[401] as { headers?: Record<string, unknown> };
  const { 'WWW-Authenticate': _www, ...headers } = unauthorized.headers ?? {};
  route.schema = { ...route.schema, response: { ...responses, 403: { ...unauthorized, description: CSRF_403, headers } } };
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
  /** Detail sections of `/readyz` that do not decide readiness (the email service's `smtp`). */
  readinessSections?: Record<string, ReadinessSection>;
  /** Folders besides the data folder (and the SQLite file's) whose free space is watched, by label (`storage`). */
  folders?: Record<string, string>;
  logStream?: DestinationStream | undefined;
  /** The clock of sessions and the sign-in throttle; tests move it. */
  clock?: () => Date;
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
      sessionCookie: identity.sessionCookie,
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
    // The database is ready when it answers and writes (a full disk answers but cannot
    // write); the folders when they have more than the floor free (issue 28).
    const folders: Record<string, string> = { data: config.dataDir, ...(options.folders ?? {}) };
    if (config.database.kind === 'sqlite' && config.database.path !== ':memory:' && dirname(config.database.path) !== config.dataDir) folders.database = dirname(config.database.path);
    const disk = new DiskSpace(folders, config.minFreeBytes);
    disk.register(app.metrics.registry);
    registerHealthRoutes(app, {
      database: () => writeProbe(core.database as unknown as Database<CoreTables>),
      storage: () => disk.check(),
      ...(limiter.shared ? { redis: () => limiter.ping() } : {}),
      ...(options.readiness ?? {}),
    }, undefined, options.readinessSections);
    app.addHook('onClose', async () => {
      await limiter.close();
      await core.close();
    });
    const clock = options.clock ?? (() => new Date());
    const authenticate = (perMinute: (principal: Principal) => number) =>
      apiKeyAuth({
        accounts: core.accounts,
        usage: core.keyUsage,
        accept: identity.keyLocations,
        rateLimit: { limiter, perMinute },
        session: { cookieName: identity.sessionCookie, find: (id) => core.sessions.find(id, clock()) },
      });
    return {
      app,
      routes,
      core,
      limiter,
      authenticate,
      protect: (scope, perMinute) => {
        scope.addHook('onRoute', documentCsrfRefusal);
        scope.addHook('onRequest', authenticate(perMinute));
      },
      dashboardAuth: new DashboardAuthService({ accounts: core.accounts, sessions: core.sessions, throttle: core.signInThrottle, signUpThrottle: core.signUpThrottle, clock }),
      apiKeys: new ApiKeysService({ accounts: core.accounts, clock }),
      disk,
    };
  } catch (err) {
    await core.close();
    throw err;
  }
}
