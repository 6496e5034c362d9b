import type { DestinationStream } from 'pino';
import { apiKeyAuth, createServiceBase, type ServiceApp } from '@mailconv/platform';
import type { EmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { planOf, type EmailDeps } from './deps.js';
import { EMAIL_ERROR_STATUS } from './errors.js';
import { emailPlans } from './plans.js';
import { registerApiKeyRoutes } from './routes/dashboard/api-keys.route.js';
import { registerAccountRoutes } from './routes/v1/account.route.js';
import { KEY_LOCATIONS } from './schemas.js';

/** API key prefix of this service: `ev_live_` + 32 base62 characters (email-decisions.md item 7). */
export const EMAIL_KEY_PREFIX = 'ev_live_';

export interface EmailAppOptions {
  /** The clock used for quota months and timestamps; tests move it. */
  clock?: () => Date;
  logStream?: DestinationStream;
}

/** Builds the email verification service: its own database, keys and routes. */
export async function buildApp(config: EmailConfig, options: EmailAppOptions = {}): Promise<ServiceApp> {
  const plans = emailPlans(config.plansFile);
  const { app, core, limiter } = await createServiceBase<EmailTables>({
    app: {
      title: 'Email Verification API',
      version: '1.0.0',
      description: 'Verifies whether e-mail addresses can receive mail. A separate service from the file conversion API.',
      errorTable: EMAIL_ERROR_STATUS,
      logLevel: config.logLevel,
      bodyLimit: config.bodyLimitBytes,
      trustProxy: config.trustProxy,
      keyLocations: KEY_LOCATIONS,
      ...(options.logStream ? { logStream: options.logStream } : {}),
    },
    redisUrl: config.redisUrl,
    redisPrefix: 'email',
    core: { database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX },
  });
  const deps: EmailDeps = { core, plans, clock: options.clock ?? (() => new Date()) };

  await app.register(async (scope) => {
    scope.addHook(
      'onRequest',
      apiKeyAuth({ accounts: core.accounts, usage: core.keyUsage, accept: KEY_LOCATIONS, rateLimit: { limiter, perMinute: (p) => planOf(deps, p.plan).rateLimitRpm } }),
    );
    registerAccountRoutes(scope, deps);
    registerApiKeyRoutes(scope, deps);
  });
  return app;
}
