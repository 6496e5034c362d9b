import { openWebhooks, resolverLookup, type ServiceCore, type WebhookDispatcher, type WebhooksService } from '@mailconv/platform';
import { createEngine, EgressPool, type Engine, type SmtpCacheOptions, type Verifier } from '@mailconv/verifier';
import { AccountService } from './accounts/account.service.js';
import type { EmailConfig } from './config.js';
import type { EmailTables } from './db/schema.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import type { EmailObserver } from './observer.js';
import type { BullChunkQueue } from './jobs/chunk-queue.js';
import type { ChunkWorker } from './jobs/chunk-worker.job.js';
import { createJobsRuntime } from './jobs/jobs-runtime.js';
import type { JobsService } from './jobs/jobs.service.js';
import { IdempotencyRepository } from './repositories/idempotency.repository.js';
import { SmtpOutcomesRepository } from './repositories/smtp-outcomes.repository.js';
import { DailyUsageRecorder, DailyUsageRepository } from './usage/daily-usage.repository.js';
import { BatchesService } from './verification/batches.service.js';
import { VerificationService } from './verification/verification.service.js';
import { WEBHOOK_EVENTS, WEBHOOK_USER_AGENT } from './webhooks/events.js';
import { SmtpSelfCheckMonitor } from './smtp-self-check.js';

export { EMAIL_KEY_PREFIX } from './key-prefix.js';

/**
 * The engine the settings describe: the configured resolvers, and SMTP probing when HELO
 * and FROM are set; `onSmtpProbe` is told of every address probed (metrics); `smtpCache`
 * reuses outcomes (the composition root passes the database's store).
 */
export function engineFromConfig(config: EmailConfig, onSmtpProbe?: EmailObserver['smtpProbe'], onSmtpEgress?: EmailObserver['smtpEgress'], smtpCache?: SmtpCacheOptions, onSmtpRateLimited?: EmailObserver['smtpRateLimited']): Engine {
  return createEngine({
    ...(onSmtpProbe ? { onSmtpProbe } : {}),
    ...(smtpCache ? { smtpCache } : {}),
    dns: { servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs },
    smtp: config.smtp
      ? {
          helo: config.smtp.helo,
          from: config.smtp.from,
          port: config.smtp.port,
          allowPrivate: config.smtp.allowPrivate,
          ...(config.smtp.restrictTo ? { restrictTo: config.smtp.restrictTo } : {}),
          // One pool for the engine's probers: an egress that fails is out for all of them.
          ...(config.smtp.egresses.length ? { egresses: new EgressPool(config.smtp.egresses, onSmtpEgress) } : {}),
          ...(config.smtp.providerLimits ? { rules: config.smtp.providerLimits.rules, defaultLimits: config.smtp.providerLimits.defaults } : {}),
          rateLimitCooldown: config.smtp.rateLimitCooldown,
          ...(onSmtpRateLimited ? { onRateLimited: onSmtpRateLimited } : {}),
        }
      : null,
  });
}

/** Everything the email service runs on, built once per process. */
export interface EmailServices {
  account: AccountService;
  verification: VerificationService;
  batches: BatchesService;
  jobs: JobsService;
  webhooks: WebhooksService;
  /** This process's chunk worker (null when it verifies no chunks). */
  worker: ChunkWorker | null;
  /** The BullMQ chunk queue (Redis with PostgreSQL); close it after the worker has stopped. */
  queue: BullChunkQueue | null;
  /** This process's webhook dispatcher (null when `EMAIL_WEBHOOKS_CONCURRENCY` is 0). */
  dispatcher: WebhookDispatcher | null;
  /** Verifications per day (read by the dashboard); close the recorder before the database. */
  usage: { repository: DailyUsageRepository; recorder: DailyUsageRecorder };
  /** The SMTP self-check (issue 23) of this process's engine; null without SMTP probing. Start and stop it with the process. */
  smtpCheck: SmtpSelfCheckMonitor | null;
  /** Reused SMTP outcomes (decision 28); close it before the database (it writes what is pending). */
  smtpOutcomes: SmtpOutcomesRepository;
}

/** Closes what the services write in the background, before the database closes: the daily counts and the SMTP outcomes. */
export async function closeEmailWriters(services: Pick<EmailServices, 'usage' | 'smtpOutcomes'>): Promise<void> {
  await Promise.all([services.usage.recorder.close(), services.smtpOutcomes.close()]);
}

/**
 * The composition root of the email service: repositories, services, the job worker and
 * the webhook dispatcher, wired the same way for the API process (`app.ts`) and the
 * worker process (`worker.ts`). Starting and stopping the worker and dispatcher is the
 * caller's (the API ties them to Fastify's hooks, the worker to signals).
 */
export function composeEmailServices(options: {
  config: EmailConfig;
  core: ServiceCore<EmailTables>;
  clock: () => Date;
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Chunks this process verifies at once; 0: no worker here. */
  jobWorkers: number;
  /** The verification engine; built from the settings when absent. */
  engine?: Engine;
  /** Resolvers of the webhook address check (the system's when absent; tests: the rig's). */
  webhookDnsServers?: readonly string[];
  /** Told of what this process does (metrics): verifications, SMTP probes, chunks, leases, jobs, webhook attempts. */
  observer?: EmailObserver;
}): EmailServices {
  const { config, core, clock, log } = options;
  const observer = options.observer ?? {};
  const smtpOutcomes = new SmtpOutcomesRepository(core.database, {
    intervalMs: 200,
    pruneEveryMs: 600_000,
    clock,
    onError: (err) => log.error({ err }, 'could not store SMTP outcomes for reuse'),
  });
  const smtpCache: SmtpCacheOptions = { store: smtpOutcomes, ttlMs: config.smtpCacheTtlMs, now: clock, ...(observer.smtpCache ? { onLookup: observer.smtpCache.bind(observer) } : {}) };
  const engine = options.engine ?? engineFromConfig(config, observer.smtpProbe?.bind(observer), observer.smtpEgress?.bind(observer), smtpCache, observer.smtpRateLimited?.bind(observer));
  const verifier: Verifier = observer.verified
    ? {
        verify: async (email, opts) => {
          const result = await engine.verifier.verify(email, opts);
          observer.verified!(result);
          return result;
        },
        inspect: (email, opts) => engine.verifier.inspect(email, opts),
      }
    : engine.verifier;
  const usageRepository = new DailyUsageRepository(core.database);
  const usageRecorder = new DailyUsageRecorder(usageRepository, core.database, 1_000, (err) => log.error({ err }, 'could not write the daily verification counts'));
  const verification = new VerificationService({
    verifier,
    quota: core.quota,
    charges: core.charges,
    clock,
    smtpAvailable: engine.prober !== null,
    smtpAvailability: engine.availability,
    batchConcurrency: config.batchConcurrency,
    onCounted: (accountId, count, at) => usageRecorder.record(accountId, count, at),
  });
  const idempotency = new IdempotencyService({ repository: new IdempotencyRepository(core.database), clock });
  const resolvers = webhookResolvers(config, options.webhookDnsServers);
  // Webhooks: the platform's outbox, rules and dispatcher, the same as the conversion service's.
  const { events, service: webhooks, dispatcher } = openWebhooks({
    database: core.database,
    config: config.webhooks,
    eventNames: WEBHOOK_EVENTS,
    userAgent: WEBHOOK_USER_AGENT,
    clock,
    log,
    lookup: resolvers ? resolverLookup(resolvers) : undefined,
    ...(observer.webhookAttempt ? { onAttempt: observer.webhookAttempt.bind(observer) } : {}),
  });
  // Bulk jobs: the database is the state of record; this process's worker claims chunks
  // from it (so several processes on one database share the work).
  const smtpCooling = () => engine.prober?.coolingHosts() ?? { hosts: 0, longestMs: 0 };
  observer.smtpCooling?.(smtpCooling);
  const { service: jobs, worker, queue } = createJobsRuntime({ database: core.database, quota: core.quota, events, verification, idempotency, clock, config, concurrency: options.jobWorkers, log, usage: usageRepository, observer, smtpCooling });
  return {
    account: new AccountService({ quota: core.quota, clock }),
    verification,
    batches: new BatchesService({ database: core.database, verification, idempotency, events, clock }),
    jobs,
    webhooks,
    worker,
    queue,
    dispatcher,
    usage: { repository: usageRepository, recorder: usageRecorder },
    smtpOutcomes,
    smtpCheck: config.smtp && engine.availability ? new SmtpSelfCheckMonitor(config.smtp, engine, log, observer.smtpSelfCheck?.bind(observer)) : null,
  };
}

/**
 * The resolvers of the webhook address check: the caller's, else the service's own
 * (`EMAIL_DNS_SERVERS`, the verifier's), else none (the system's). One setting points every
 * lookup of the service at one resolver, so a service whose MX lookups go to the loopback rig
 * never asks the system's resolver about a webhook host either.
 */
export function webhookResolvers(config: Pick<EmailConfig, 'dnsServers'>, explicit?: readonly string[]): readonly string[] | undefined {
  if (explicit) return explicit;
  return config.dnsServers.length ? config.dnsServers : undefined;
}
