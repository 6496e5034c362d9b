import multipart from '@fastify/multipart';
import type { DestinationStream } from 'pino';
import { createRateLimiter, createServiceBase, type ServiceApp, type ServiceIdentity } from '@mailconv/platform';
import { createEngine, type Engine } from '@mailconv/verifier';
import type { EmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { planOf, type EmailDeps } from './deps.js';
import { EMAIL_ERROR_STATUS } from './errors.js';
import { emailPlans } from './plans.js';
import { registerApiKeyRoutes } from './routes/dashboard/api-keys.route.js';
import { DeliveriesRepository } from './repositories/deliveries.repository.js';
import { EventsRepository } from './repositories/events.repository.js';
import { IdempotencyRepository } from './repositories/idempotency.repository.js';
import { WebhooksRepository } from './repositories/webhooks.repository.js';
import { registerDeliveryRoutes, registerWebhookRoutes } from './routes/dashboard/webhooks.route.js';
import { createDispatcher } from './webhooks/runtime.js';
import { resolverLookup } from './webhooks/url-guard.js';
import { WebhooksService } from './webhooks/webhooks.service.js';
import { createJobsRuntime } from './jobs/jobs-runtime.js';
import { registerJobRoutes } from './routes/v1/jobs.route.js';
import { registerPublicRoutes } from './routes/public/validate-email.route.js';
import { registerAccountRoutes } from './routes/v1/account.route.js';
import { registerVerifyRoutes } from './routes/v1/verify.route.js';
import { VerificationService } from './verification/verification.service.js';
import { KEY_LOCATIONS } from './schemas.js';

/** API key prefix of this service: `ev_live_` + 32 base62 characters (email-decisions.md item 7). */
export const EMAIL_KEY_PREFIX = 'ev_live_';

export interface EmailAppOptions {
  /** The clock used for quota months and timestamps; tests move it. */
  clock?: () => Date;
  logStream?: DestinationStream;
  /** The verification engine; built from the DNS and SMTP settings when absent. */
  engine?: Engine;
  /**
   * Resolvers (`host:port`) of the webhook address check, at creation and at delivery; the
   * system's when absent. Tests give the rig's DNS server.
   */
  webhookDnsServers?: readonly string[];
}

/** The engine the settings describe: the configured resolvers, and SMTP probing when HELO and FROM are set. */
export function engineFromConfig(config: EmailConfig): Engine {
  return createEngine({
    dns: { servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs },
    smtp: config.smtp
      ? {
          helo: config.smtp.helo,
          from: config.smtp.from,
          port: config.smtp.port,
          allowPrivate: config.smtp.allowPrivate,
          ...(config.smtp.restrictTo ? { restrictTo: config.smtp.restrictTo } : {}),
        }
      : null,
  });
}

/** What makes this service itself: name, errors, keys, tables. */
const EMAIL_IDENTITY: ServiceIdentity = {
  title: 'Email Verification API',
  version: '1.0.0',
  description: 'Verifies whether e-mail addresses can receive mail. A separate service from the file conversion API.',
  errorTable: EMAIL_ERROR_STATUS,
  keyLocations: KEY_LOCATIONS,
  keyPrefix: EMAIL_KEY_PREFIX,
  redisPrefix: 'email',
  migrations: EMAIL_MIGRATIONS,
};

/** Builds the email verification service: its own database, keys and routes. */
export async function buildApp(config: EmailConfig, options: EmailAppOptions = {}): Promise<ServiceApp> {
  const plans = emailPlans(config.plansFile);
  const { app, core, authenticate } = await createServiceBase<EmailTables>({ config, identity: EMAIL_IDENTITY, logStream: options.logStream });
  const clock = options.clock ?? (() => new Date());
  const engine = options.engine ?? engineFromConfig(config);
  const verification = new VerificationService({ verifier: engine.verifier, quota: core.quota, charges: core.charges, clock, smtpAvailable: engine.prober !== null, batchConcurrency: config.batchConcurrency });
  const deliveries = new DeliveriesRepository(core.database);
  const events = new EventsRepository(core.database, deliveries);
  const webhookLookup = options.webhookDnsServers ? resolverLookup(options.webhookDnsServers) : undefined;
  const webhooks = new WebhooksService({ webhooks: new WebhooksRepository(core.database), deliveries, events, clock, allowInsecure: config.webhooks.allowInsecure, ...(webhookLookup ? { lookup: webhookLookup } : {}) });
  const deps: EmailDeps = { core, plans, clock, verification, idempotency: new IdempotencyRepository(core.database), events, webhooks };

  // Webhooks: events and their deliveries are rows (the outbox); this process's dispatcher
  // sends whatever is due, sharing the work with other processes through leases.
  const dispatcher = createDispatcher({ config, deliveries, events, clock, log: app.log, ...(webhookLookup ? { lookup: webhookLookup } : {}) });
  if (dispatcher) {
    app.addHook('onReady', async () => dispatcher.start());
    app.addHook('preClose', async () => dispatcher.stop());
  }

  // Bulk jobs: the database is the state of record; this process's worker claims chunks
  // from it (so several processes on one database share the work).
  const { service: jobs, worker, queue } = createJobsRuntime({ database: core.database, quota: core.quota, events: deps.events, verification, clock, config, concurrency: config.jobs.workers, log: app.log });
  if (worker) app.addHook('onReady', async () => worker.start());
  // preClose runs before the database is closed: chunks in flight are handed back first.
  app.addHook('preClose', async () => {
    await worker?.stop();
    await queue?.close();
  });

  const publicLimits = {
    perMinute: config.publicRpm,
    smtpPerDay: config.publicSmtpPerDay,
    minuteLimiter: createRateLimiter({ keyPrefix: 'email:public', redisUrl: config.redisUrl }),
    dayLimiter: createRateLimiter({ keyPrefix: 'email:public-smtp', redisUrl: config.redisUrl, windowSeconds: 86_400 }),
  };
  app.addHook('onClose', async () => {
    await publicLimits.minuteLimiter.close();
    await publicLimits.dayLimiter.close();
  });
  registerPublicRoutes(app, deps, publicLimits);

  await app.register(async (scope) => {
    scope.addHook('onRequest', authenticate((p) => planOf(deps, p.plan).rateLimitRpm));
    registerAccountRoutes(scope, deps);
    registerApiKeyRoutes(scope, deps);
    registerWebhookRoutes(scope, deps);
    registerDeliveryRoutes(scope, deps);
    registerVerifyRoutes(scope, deps, { batchBodyLimit: config.batchBodyLimitBytes });
    // Uploads (multipart) are accepted by the jobs routes only; elsewhere they stay 415.
    await scope.register(async (jobsScope) => {
      await jobsScope.register(multipart);
      registerJobRoutes(jobsScope, deps, jobs, { bodyLimit: config.jobs.bodyLimitBytes });
    });
  });
  return app;
}
