import { Converter, type SecurityEvent } from '@mailconv/converter';
import { BullWorkQueue, loadSecretsKey, openWebhooks, resolverLookup, SecretBox, type DiskSpace, type ServiceCore, type ServiceWebhooks } from '@mailconv/platform';
import type { FastifyBaseLogger } from 'fastify';
import type { ConvertConfig } from './config.js';
import { ConversionService } from './conversion/conversion.service.js';
import { ConversionWorker, type ConversionMessage } from './conversion/conversion-worker.js';
import { ShareLinksService } from './conversion/share-links.service.js';
import { CONVERSION_EVENTS, WEBHOOK_USER_AGENT } from './conversion/events.js';
import { reconcileStorage } from './conversion/reconcile.js';
import { exportPolicy, S3Exporter } from './conversion/s3-export.js';
import { SigningCertificates } from './conversion/signing-certificates.js';
import { UrlFetcher, urlPolicy } from './conversion/url-fetcher.js';
import type { ConvertTables } from './db/schema.js';
import { holderIsGone, leaseHolderId } from './lease-holder.js';
import { ConversionsRepository } from './repositories/conversions.repository.js';
import { MaintenanceLeasesRepository } from './repositories/maintenance-leases.repository.js';
import { ShareLinksRepository } from './repositories/share-links.repository.js';
import { SigningCertificatesRepository } from './repositories/signing-certificates.repository.js';
import { UploadsRepository } from './repositories/uploads.repository.js';
import { FileStore } from './storage/file-store.js';

/** Everything a conversion process runs besides HTTP, built once for the API process and the worker process. */
export interface ConvertRuntime {
  store: FileStore;
  converter: Converter;
  conversions: ConversionService;
  /** This process's worker (roles `worker` and `all`), or null. */
  worker: ConversionWorker | null;
  /** Completion webhooks: the outbox, the endpoints' rules and this process's dispatcher. */
  webhooks: ServiceWebhooks;
  /** Share links of outputs (extension). */
  shareLinks: ShareLinksService;
  /** Signing certificates: the operator's and the accounts' (issue 25). */
  signing: SigningCertificates;
  /** Starts the webhook dispatcher, and the worker and the retention sweeper (roles `worker` and `all`). */
  start(): void;
  /** Stops the sweeper, hands back running conversions, closes the queue and (unless it was lent) the converter. */
  stop(): Promise<void>;
}

/** The sweeper's lease name: one process at a time sweeps. */
const SWEEP_LEASE = 'retention-sweep';

/** The storage folder and the engines (`lent`: a converter to use instead of starting one, left running on stop). */
export async function openEngines(config: ConvertConfig, lent?: Converter): Promise<{ store: FileStore; converter: Converter; owned: boolean }> {
  const store = new FileStore(config.storageDir);
  await store.init();
  if (lent) return { store, converter: lent, owned: false };
  const converter = await Converter.create({
    workDir: store.workDir,
    prestart: config.prestart && config.role !== 'api',
    timeoutMs: config.timeoutMs,
    ...(config.libreofficeInstances ? { libreoffice: { instances: config.libreofficeInstances } } : {}),
    chromium: { instances: config.chromiumInstances },
    ...(config.ocrConcurrency ? { ocrConcurrency: config.ocrConcurrency } : {}),
    ...(config.engineUser ? { engineUser: config.engineUser } : {}),
    disabledEngines: config.disabledEngines,
  });
  return { store, converter, owned: true };
}

/**
 * What an operator reads about an engine that is missing: the probe's warning (what is
 * missing and the package that brings it) and the setting that leaves the engine off.
 */
export function missingEngineMessage(warning: string, engine: string): string {
  return `${warning}; or turn it off with CONVERT_ENGINES_DISABLED=${engine}`;
}

/** The engines that were missing at the last probe, each with its message (logged at start-up). */
export function missingEngines(converter: Converter): { engine: string; message: string }[] {
  return converter
    .probes()
    .filter((p) => !p.available)
    .map((p) => ({ engine: p.engine, message: missingEngineMessage(p.warning ?? `${p.engine} disabled`, p.engine) }));
}

/** The composition root of the conversion service past HTTP: queue, worker, sweeper and conversion service. */
export function createConvertRuntime(options: {
  config: ConvertConfig;
  core: ServiceCore<ConvertTables>;
  engines: { store: FileStore; converter: Converter; owned: boolean };
  /** Free space of the storage folder: uploads that cannot fit are refused before they are read. */
  disk: DiskSpace;
  clock: () => Date;
  log: FastifyBaseLogger;
  /** Told of every conversion this process finished (metrics). */
  onFinished?: (finished: { engine: string; outcome: string; seconds: number }) => void;
  /** Told of every engine file the converter refused to read (metrics); each is logged here too. */
  onSecurityEvent?: (event: SecurityEvent) => void;
}): ConvertRuntime {
  const { config, core, clock, log } = options;
  const { store, converter } = options.engines;
  // An engine that leaves a link, a FIFO or a device as its output has been made to run the
  // upload's code: the conversion fails, and the operator must hear of it (docs/operations.md).
  const stopWatching = converter.onSecurityEvent((event) => {
    log.error({ security_event: event.kind, engine: event.engine, path: event.path, detail: event.detail }, 'security: an engine left a file the service refuses to read (possible exploit); the conversion failed');
    options.onSecurityEvent?.(event);
  });
  const uploads = new UploadsRepository(core.database);
  // Every URL this service fetches goes through the one egress guard (packages/platform).
  const urls = new UrlFetcher({ policy: urlPolicy(config.urls), timeoutMs: config.urls.timeoutMs, maxRedirects: config.urls.maxRedirects });
  // Exports to S3-compatible storage: endpoints through the same guard, credentials sealed until used.
  const box = new SecretBox(loadSecretsKey(config.secretsKey.file, config.secretsKey.create));
  const exporter = new S3Exporter({ policy: exportPolicy(config), partBytes: config.exports.partBytes, timeoutMs: config.exports.timeoutMs, box });
  // Signing certificates (issue 25): the operator's from the settings, the accounts' sealed with the same box.
  const signing = new SigningCertificates({ repository: new SigningCertificatesRepository(core.database), box, operator: config.signing, clock });
  const repository = new ConversionsRepository(core.database);
  // Completion webhooks: the platform's outbox and dispatcher, the same as the email service's.
  const webhooks = openWebhooks({
    database: core.database,
    config: config.webhooks,
    eventNames: CONVERSION_EVENTS,
    userAgent: WEBHOOK_USER_AGENT,
    clock,
    log,
    lookup: config.urls.dnsServers.length ? resolverLookup(config.urls.dnsServers) : undefined,
  });
  const queue = config.redisUrl ? new BullWorkQueue<ConversionMessage>(config.redisUrl, config.queueName, log) : null;
  const worker =
    config.role === 'api'
      ? null
      : new ConversionWorker({
          conversions: repository,
          uploads,
          store,
          converter,
          quota: core.quota,
          clock,
          retentionMs: config.retentionMs,
          maxRunning: config.maxRunning,
          leaseMs: config.leaseMs,
          // With Redis, messages bring the work; the database poll is only the safety net.
          pollMs: queue ? Math.max(10 * config.pollMs, 5000) : config.pollMs,
          queue,
          log,
          urls,
          events: webhooks.events,
          publicBaseUrl: config.publicBaseUrl,
          exporter,
          signing,
          ...(options.onFinished ? { onFinished: options.onFinished } : {}),
        });
  const conversions = new ConversionService({
    converter,
    store,
    disk: options.disk,
    uploads,
    conversions: repository,
    quota: core.quota,
    worker,
    queue,
    leaseMs: config.leaseMs,
    clock,
    retentionMs: config.retentionMs,
    publicBaseUrl: config.publicBaseUrl,
    log,
    urls,
    webhooks: webhooks.service,
    exporter,
    signing,
  });
  const shareLinks = new ShareLinksService({ links: new ShareLinksRepository(core.database), conversions, clock, publicBaseUrl: config.publicBaseUrl });
  const leases = new MaintenanceLeasesRepository(core.database);
  // Names this process (machine, pid, start time), so that a successor can tell it died.
  const sweeperId = leaseHolderId();
  let sweeper: NodeJS.Timeout | undefined;
  const reconcile = () => reconcileStorage({ store, converter, uploads, conversions: repository, clock, graceMs: config.reconcileGraceMs, log });
  const sweep = async () => {
    // The lease outlives two intervals, so a live sweeper keeps it and a dead one's passes on;
    // at once when the holder was a process of this machine that is gone (issue 45).
    if (await leases.hold(SWEEP_LEASE, sweeperId, clock(), 2 * config.sweepIntervalMs + 10_000, holderIsGone)) {
      await conversions.sweep();
      await reconcile();
    }
  };
  return {
    store,
    converter,
    conversions,
    worker,
    webhooks,
    shareLinks,
    signing,
    start() {
      webhooks.dispatcher?.start();
      if (!worker) return;
      worker.start();
      // At start-up: what a killed predecessor left behind goes before the first interval.
      void sweep().catch((err: unknown) => log.error({ err }, 'retention sweep failed'));
      sweeper = setInterval(() => void sweep().catch((err: unknown) => log.error({ err }, 'retention sweep failed')), config.sweepIntervalMs);
      sweeper.unref();
    },
    async stop() {
      stopWatching();
      clearInterval(sweeper);
      await worker?.stop();
      await webhooks.dispatcher?.stop();
      await queue?.close();
      if (options.engines.owned) await converter.close();
    },
  };
}
