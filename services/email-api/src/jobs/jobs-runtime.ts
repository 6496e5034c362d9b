import type { Database, QuotaLedger } from '@mailconv/platform';
import type { DailyUsageRepository } from '../usage/daily-usage.repository.js';
import type { EmailConfig } from '../config.js';
import type { EmailTables } from '../db/schema.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { EventsRepository } from '@mailconv/platform';
import type { EmailObserver } from '../observer.js';
import { JobsRepository } from '../repositories/jobs.repository.js';
import type { VerificationService } from '../verification/verification.service.js';
import { BullChunkQueue } from './chunk-queue.js';
import { ChunkWorker } from './chunk-worker.job.js';
import { JobsService } from './jobs.service.js';

/**
 * The jobs service and, when `concurrency` > 0, the worker of this process, wired to each
 * other, and the BullMQ queue when Redis and PostgreSQL are configured (close it after the
 * worker has stopped).
 */
export function createJobsRuntime(options: {
  database: Database<EmailTables>;
  quota: QuotaLedger;
  events: EventsRepository;
  verification: VerificationService;
  idempotency: IdempotencyService;
  clock: () => Date;
  config: EmailConfig;
  /** Chunks this process verifies at once; 0: no worker here. */
  concurrency: number;
  log: { error(obj: object, msg: string): void };
  usage?: DailyUsageRepository;
  observer?: EmailObserver;
  /** MX hosts cooling down after a rate limit now, and the longest time left (issue 49). */
  smtpCooling?: () => { hosts: number; longestMs: number };
}): { service: JobsService; worker: ChunkWorker | null; queue: BullChunkQueue | null } {
  const { config } = options;
  const repository = new JobsRepository(options.database);
  let worker: ChunkWorker | null = null;
  // Redis with PostgreSQL (the scale-out setup): BullMQ carries chunk work between processes.
  const queue = config.redisUrl && config.database.kind === 'postgres' ? new BullChunkQueue(config.redisUrl, config.jobs.queueName, options.log) : null;
  const service = new JobsService({
    database: options.database,
    jobs: repository,
    quota: options.quota,
    events: options.events,
    verification: options.verification,
    idempotency: options.idempotency,
    clock: options.clock,
    chunkSize: config.jobs.chunkSize,
    publicBaseUrl: config.publicBaseUrl,
    // A submit or cancel in this process reaches its own worker at once; other processes
    // notice at their next poll or lease renewal.
    onSubmitted: async (jobId, chunkCount) => {
      if (!queue) return worker?.wake();
      try {
        await queue.enqueueJob(jobId, chunkCount);
      } catch (err) {
        // Stored all the same: the workers' database poll finds the chunks (this process's at once).
        options.log.error({ err, job_id: jobId }, 'could not enqueue the chunks of a job');
        worker?.wake();
      }
    },
    onCancelled: (id) => worker?.cancelled(id),
    ...(options.usage ? { usage: options.usage } : {}),
    ...(options.observer?.jobFinished ? { onFinished: options.observer.jobFinished.bind(options.observer) } : {}),
  });
  if (options.concurrency > 0) {
    worker = new ChunkWorker({
      jobs: repository,
      service,
      verification: options.verification,
      concurrency: options.concurrency,
      leaseMs: config.jobs.leaseMs,
      pollMs: config.jobs.pollMs,
      greylistRetryMs: config.jobs.greylistRetryMs,
      greylistRetries: config.jobs.greylistRetries,
      rateLimitRetries: config.jobs.rateLimitRetries,
      ...(options.smtpCooling ? { smtpCooling: options.smtpCooling } : {}),
      retentionDays: config.jobs.retentionDays,
      log: options.log,
      queue,
      fallbackPollMs: Math.max(10 * config.jobs.pollMs, 1000),
      ...(options.observer ? { observer: options.observer } : {}),
    });
  }
  return { service, worker, queue };
}
