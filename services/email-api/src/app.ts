import multipart from '@fastify/multipart';
import type { DestinationStream } from 'pino';
import { AppError, createRateLimiter, createServiceBase, dashboardBuildDir, registerDashboard, registerApiKeyRoutes, registerDashboardSessionRoutes, registerWebhookRoutes, type ServiceApp, type ServiceIdentity } from '@mailconv/platform';
import type { Engine } from '@mailconv/verifier';
import { closeEmailWriters, composeEmailServices, EMAIL_KEY_PREFIX } from './composition.js';
import type { EmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { planOf, type EmailDeps } from './deps.js';
import { registerEmailMetrics } from './metrics.js';
import type { SmtpSelfCheckMonitor } from './smtp-self-check.js';
import { SmtpReadinessSchema, smtpReadiness } from './smtp-readiness.js';
import { EMAIL_ERROR_STATUS } from './errors.js';
import { emailPlans } from './plans.js';
import { registerUsageRoutes } from './routes/dashboard/usage.route.js';
import { registerJobRoutes } from './routes/v1/jobs.route.js';
import { registerPublicRoutes } from './routes/public/validate-email.route.js';
import { registerAccountRoutes } from './routes/v1/account.route.js';
import { registerVerifyRoutes } from './routes/v1/verify.route.js';
import { KEY_LOCATIONS, SECURED, errors, secured } from './schemas.js';

export { EMAIL_KEY_PREFIX, engineFromConfig } from './composition.js';

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
  /** The built dashboard served under /dashboard/; packages/dashboard's build when absent. */
  dashboardDir?: string;
}

/** What makes this service itself: name, errors, keys, tables. */
const EMAIL_IDENTITY: ServiceIdentity = {
  title: 'Email Verification API',
  version: '1.0.0',
  description: 'Verifies whether e-mail addresses can receive mail. A separate service from the file conversion API.',
  errorTable: EMAIL_ERROR_STATUS,
  keyLocations: KEY_LOCATIONS,
  keyPrefix: EMAIL_KEY_PREFIX,
  sessionCookie: 'ev_session',
  redisPrefix: 'email',
  migrations: EMAIL_MIGRATIONS,
};

/** Builds the email verification service: its own database, keys and routes. */
export async function buildApp(config: EmailConfig, options: EmailAppOptions = {}): Promise<ServiceApp> {
  const plans = emailPlans(config.plansFile);
  const clock = options.clock ?? (() => new Date());
  // The smtp section of /readyz reads the monitor composed below (late: the base comes first).
  let smtpCheck: SmtpSelfCheckMonitor | null = null;
  const base = await createServiceBase<EmailTables>({
    config,
    identity: EMAIL_IDENTITY,
    logStream: options.logStream,
    clock,
    readinessSections: { smtp: { schema: SmtpReadinessSchema, read: () => smtpReadiness(smtpCheck !== null, smtpCheck?.result ?? null) } },
  });
  const { app, core } = base;
  const observer = registerEmailMetrics(app.metrics.registry, core, clock);
  const services = composeEmailServices({
    config,
    core,
    clock,
    observer,
    log: app.log,
    jobWorkers: config.jobs.workers,
    ...(options.engine ? { engine: options.engine } : {}),
    ...(options.webhookDnsServers ? { webhookDnsServers: options.webhookDnsServers } : {}),
  });
  const { dispatcher, worker, queue } = services;
  smtpCheck = services.smtpCheck;
  if (smtpCheck) {
    const monitor = smtpCheck;
    app.addHook('onReady', async () => monitor.start());
    app.addHook('preClose', async () => monitor.stop());
  }
  const deps: EmailDeps = { plans, account: services.account, verification: services.verification, batches: services.batches, webhooks: services.webhooks, apiKeys: base.apiKeys };
  if (dispatcher) {
    app.addHook('onReady', async () => dispatcher.start());
    app.addHook('preClose', async () => dispatcher.stop());
  }
  if (worker) app.addHook('onReady', async () => worker.start());
  // preClose runs before the database is closed: chunks in flight are handed back first.
  app.addHook('preClose', async () => {
    await worker?.stop();
    await queue?.close();
    await closeEmailWriters(services);
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
  registerDashboard(app, options.dashboardDir ?? dashboardBuildDir('email'));
  registerDashboardSessionRoutes(app, {
    auth: base.dashboardAuth,
    cookieName: EMAIL_IDENTITY.sessionCookie,
    secureCookie: config.dashboard.secureCookie,
    signupPlan: config.dashboard.signup ? plans.defaultPlan : null,
    errors,
  });

  await app.register(async (scope) => {
    base.protect(scope, (p) => planOf(deps, p.plan).rateLimitRpm);
    registerAccountRoutes(scope, deps);
    registerApiKeyRoutes(scope, { apiKeys: deps.apiKeys, keyPrefix: EMAIL_KEY_PREFIX, security: SECURED, errors, secured });
    registerWebhookRoutes(scope, {
      webhooks: deps.webhooks,
      // The caller's plan must include webhooks (they start with Starter).
      authorize: (principal) => {
        const plan = planOf(deps, principal.plan);
        if (!plan.features.webhooks) throw new AppError('feature_not_available', `The ${plan.name} plan does not include webhooks; they start with the Starter plan.`);
      },
      authorizationStatuses: [403],
      security: SECURED,
      errors,
      secured,
    });
    registerUsageRoutes(scope, services.usage.repository, clock);
    registerVerifyRoutes(scope, deps, { batchBodyLimit: config.batchBodyLimitBytes });
    // Uploads (multipart) are accepted by the jobs routes only; elsewhere they stay 415.
    await scope.register(async (jobsScope) => {
      await jobsScope.register(multipart);
      registerJobRoutes(jobsScope, deps, services.jobs, { bodyLimit: config.jobs.bodyLimitBytes });
    });
  });
  return app;
}
