import { randomUUID } from 'node:crypto';
import type { Converter, ConversionFailure, SigningCredential } from '@mailconv/converter';
import type { BullWorkQueue, EventsRepository, QuotaLedger } from '@mailconv/platform';
import type { Kysely } from 'kysely';
import type { ConvertTables } from '../db/schema.js';
import type { ConversionRow, ConversionsRepository } from '../repositories/conversions.repository.js';
import type { UploadsRepository } from '../repositories/uploads.repository.js';
import type { FileStore } from '../storage/file-store.js';
import { refundsFailure } from './charging.js';
import { conversionEvent } from './events.js';
import type { SigningCertificates } from './signing-certificates.js';
import { outputFilename } from './filenames.js';
import { expandKey, type ExportRecord, type S3Exporter } from './s3-export.js';
import type { UrlFetcher } from './url-fetcher.js';

/** A queue message: only the conversion's id; the database says what to do. */
export interface ConversionMessage {
  id: string;
}

/** Claims of one conversion: the first, and one retry after its process died (its lease expired). */
export const MAX_ATTEMPTS = 2;

/** How often a running conversion renews its lease and learns of a shred made elsewhere, at most. */
const RENEW_TICK_MS = 1000;

export interface ConversionWorkerOptions {
  conversions: ConversionsRepository;
  uploads: UploadsRepository;
  store: FileStore;
  converter: Converter;
  quota: QuotaLedger;
  clock: () => Date;
  retentionMs: number;
  /** Conversions this process runs at once, all accounts together. */
  maxRunning: number;
  /** How long a claim holds without renewal; a killed process's conversions are retried after it. */
  leaseMs: number;
  /** How often the worker looks in the database for work no message or local submit announced (expired leases). */
  pollMs: number;
  /** BullMQ (`CONVERT_REDIS_URL`): conversions arrive as messages from any process. */
  queue: BullWorkQueue<ConversionMessage> | null;
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Told of every conversion this process finished (metrics): the engines that ran (`+`-joined, `none` when none did), `completed` or the failure code, and the time the engines took. */
  onFinished?: (finished: { engine: string; outcome: string; seconds: number }) => void;
  /** Fetches a URL-imported page's sub-resources through the egress guard (issue 22). */
  urls?: UrlFetcher;
  /** The webhook outbox: a finished conversion's event is written with its outcome (issue 24). */
  events?: EventsRepository;
  /** Base of the event's `download_url`. */
  publicBaseUrl?: string;
  /** Uploads outputs to S3-compatible storage for conversions that ask (issue 24). */
  exporter?: S3Exporter;
  /** Resolves `sign.certificate` to the credential that signs (issue 25). */
  signing?: SigningCertificates;
}

interface Flight {
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Runs conversions: claims one with a lease in the database (the state of record), renews
 * the lease while the engine works, and writes the outcome only while it still holds it.
 * A shred made by any process ends the lease; the holder notices at its next renewal (about
 * a second), stops the engine, removes its output and lets go. A process that dies stops
 * renewing: after the lease its conversions are claimed again, once, and then failed and
 * refunded. Per-account limits (`account_limit`) hold across processes because they are
 * checked at claim time under the account's lock.
 */
export class ConversionWorker {
  /** This worker's id: the first part of every lease it takes (`<id>:<n>`). */
  readonly id = randomUUID();
  private claims = 0;
  /** Slots taken: running conversions plus claims being made. */
  private busy = 0;
  private stopping = false;
  private poller: NodeJS.Timeout | undefined;
  private readonly flights = new Map<string, Flight>();

  constructor(private readonly o: ConversionWorkerOptions) {}

  start(): void {
    if (this.poller) return;
    this.o.queue?.consume(this.o.maxRunning, (m) => this.onMessage(m));
    this.poller = setInterval(() => {
      this.failAbandoned()
        .catch((err: unknown) => this.o.log.error({ err }, 'failing abandoned conversions failed'))
        .finally(() => this.kick());
    }, this.o.pollMs);
    this.poller.unref();
    this.kick();
  }

  /** Work was stored or a slot freed: claim for every free slot (each claim takes its own row, or finds none). */
  kick(): void {
    while (!this.stopping && this.busy < this.o.maxRunning) {
      this.busy++;
      this.claimAndRun().catch((err: unknown) => this.o.log.error({ err }, 'conversion claim failed'));
    }
  }

  /** Runs one claimable conversion (`target`, or the oldest) in a slot already taken; false when there was none. */
  private async claimAndRun(target?: string): Promise<boolean> {
    let row: ConversionRow | null = null;
    try {
      row = await this.o.conversions.claim(`${this.id}:${++this.claims}`, this.o.clock(), this.o.leaseMs, MAX_ATTEMPTS, target);
      if (row) await this.execute(row);
      return row !== null;
    } finally {
      this.busy--;
      if (row) await this.handOff(row.account_id);
    }
  }

  /** A queue message: run the conversion it names, if it is still claimable and a slot is free. */
  private async onMessage(m: ConversionMessage): Promise<void> {
    if (this.stopping) return;
    if (this.busy >= this.o.maxRunning) {
      // Full here (work claimed from the database poll): offer it again shortly, to whoever is free.
      await this.o.queue?.add([{ id: `${m.id}.${randomUUID()}`, data: m, delayMs: 500 }]);
      return;
    }
    this.busy++;
    try {
      await this.claimAndRun(m.id);
    } catch (err) {
      this.o.log.error({ err, conversion: m.id }, 'conversion claim failed');
    }
  }

  /**
   * A slot of `accountId` freed: its oldest waiting conversion (left queued because the
   * account was at its limit) is offered now rather than at the next poll.
   */
  private async handOff(accountId: string): Promise<void> {
    try {
      if (!this.o.queue) return this.kick();
      const next = await this.o.conversions.nextQueued(accountId);
      if (next) await this.o.queue.add([{ id: `${next.id}.${randomUUID()}`, data: { id: next.id } }]);
    } catch (err) {
      this.o.log.error({ err }, 'conversion hand-off failed');
    }
  }

  /** Conversions whose process died on their last attempt: failed and refunded. */
  private async failAbandoned(): Promise<void> {
    const now = this.o.clock();
    const error = JSON.stringify({ code: 'internal_error', message: 'The service stopped twice while converting this file; it was not charged. Start it again.' });
    let events = 0;
    const rows = await this.o.conversions.failAbandoned(now, MAX_ATTEMPTS, { error, expires_at: this.expiry(now) }, async (trx, row) => {
      events += await this.recordEvent(trx, row, { status: 'failed', output: null, error: JSON.parse(error) as { code: string; message: string } }, now);
    });
    if (events) this.o.events?.notify();
    for (const row of rows) {
      await removeOutputs(this.o.store, row);
      await this.o.quota.refundCharge(row.account_id, row.quota_period, row.units);
      this.o.log.warn({ conversion: row.id }, 'conversion abandoned twice by a dead process: failed and refunded');
    }
  }

  /** Aborts a conversion that runs in this process and waits until its engine stopped and its output is gone; false when it does not run here. */
  async abortLocal(id: string): Promise<boolean> {
    const flight = this.flights.get(id);
    if (!flight) return false;
    flight.abort.abort();
    await flight.done;
    return true;
  }

  /** The end of a conversion running in this process, if it runs here. */
  localDone(id: string): Promise<void> | undefined {
    return this.flights.get(id)?.done;
  }

  /** Stops claiming, stops the conversions running here and hands them back (queued again at once). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.poller);
    for (const f of this.flights.values()) f.abort.abort();
    await Promise.all([this.o.queue?.stopConsuming(), ...[...this.flights.values()].map((f) => f.done)]);
  }

  private async execute(row: ConversionRow): Promise<void> {
    const owner = row.lease_owner!;
    const abort = new AbortController();
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.flights.set(row.id, { abort, done });
    let renewing = Promise.resolve();
    const tick = Math.min(RENEW_TICK_MS, Math.max(50, Math.floor(this.o.leaseMs / 3)));
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        try {
          // Lost (a shred anywhere, or this process stalled past its lease): stop the engine.
          if (!(await this.o.conversions.renew(row.id, owner, new Date(Date.now() + this.o.leaseMs)))) abort.abort();
        } catch (err) {
          this.o.log.error({ err, conversion: row.id }, 'lease renewal failed');
        }
      });
    }, tick);
    try {
      await this.convert(row, owner, abort.signal);
    } finally {
      clearInterval(timer);
      await renewing;
      this.flights.delete(row.id);
      settle();
    }
  }

  private async convert(row: ConversionRow, owner: string, signal: AbortSignal): Promise<void> {
    // Each attempt writes its own file: a stalled holder that lost its lease cannot overwrite the next one's.
    const outputPath = this.o.store.outputPath(row.id, row.target_format, row.attempts);
    // A retry: the earlier attempt's process is gone (its lease expired); so must its partial output be.
    for (let attempt = 0; attempt < row.attempts; attempt++) await this.o.store.remove(this.o.store.outputPath(row.id, row.target_format, attempt));
    const upload = await this.o.uploads.find(row.account_id, row.upload_id);
    const started = performance.now();
    let result: Awaited<ReturnType<Converter['convert']>> | { ok: false; error: { code: string; message: string; detail?: string } };
    if (!upload || upload.deleted_at) {
      result = { ok: false, error: { code: 'gone', message: 'The source file was removed (shredded or expired) before the conversion ran.' } };
    } else {
      try {
        const { sign_subject: _subject, ...options } = JSON.parse(row.options) as Record<string, unknown>;
        // The signing key is unsealed in memory for this conversion only; absent, the converter refuses `sign`.
        const signing = await this.signingCredential(row.account_id, options.sign);
        result = await this.o.converter.convert({
          ...(signing ? { signing } : {}),
          inputPath: this.o.store.uploadPath(upload.id),
          sourceFormat: upload.format,
          targetFormat: row.target_format,
          options: Object.fromEntries(Object.entries(options).filter(([, v]) => v !== null)),
          outputPath,
          signal,
          // The job folder carries the id: a shred finds it even if this process dies mid-run.
          jobTag: row.id,
          // A page imported from a URL is rendered at its address, its resources fetched through the guard.
          ...(upload.source_url && this.o.urls ? { remotePage: this.o.urls.forPage(upload.source_url) } : {}),
        });
      } catch (err) {
        this.o.log.error({ err, conversion: row.id }, 'converter threw');
        result = { ok: false, error: { code: 'internal_error', message: 'The conversion failed inside the service; it was not charged.' } };
      }
    }
    const now = this.o.clock();
    if (!signal.aborted || result.ok) {
      const engines = 'engines' in result && Array.isArray(result.engines) && result.engines.length > 0 ? result.engines.join('+') : 'none';
      this.o.onFinished?.({ engine: engines, outcome: result.ok ? 'completed' : result.error.code, seconds: (performance.now() - started) / 1000 });
    }
    if (result.ok) {
      const { path: _path, ...meta } = result.output;
      const output = { filename: outputFilename(upload!.filename, meta.format), ...meta, engines: [...result.engines] };
      // The export runs before the outcome is stored: the record (and its webhook) says completed once the object is in the bucket, or why it is not.
      const exported = await this.exportOutput(row, { path: outputPath, filename: output.filename, format: meta.format, mime_type: meta.mime_type, sha256: meta.sha256 }, signal);
      const at = this.o.clock();
      let events = 0;
      const stored = await this.o.conversions.finish(
        row.id,
        owner,
        { status: 'completed', output: JSON.stringify(output), output_path: outputPath, error: null, completed_at: at.toISOString(), expires_at: this.expiry(at), ...(exported ? { export: JSON.stringify(exported) } : {}) },
        async (trx) => (events = await this.recordEvent(trx, row, { status: 'completed', output, error: null, ...(exported ? { export: exported } : {}) }, at)),
      );
      if (events) this.o.events?.notify();
      // A batch's files that failed are not charged (each is listed with its error in the manifest).
      if (stored && meta.files?.failed) await this.o.quota.refundCharge(row.account_id, row.quota_period, Math.min(meta.files.failed, row.units));
      if (stored) return;
      // Shredded, or the lease lost, while the engine was still writing: the output must not outlive the record.
      await this.o.store.remove(outputPath);
      await this.letGo(row, owner);
      return;
    }
    await this.o.store.remove(outputPath);
    if (signal.aborted) return this.letGo(row, owner);
    const failure = result.error as Pick<ConversionFailure, 'code' | 'message' | 'detail'> | { code: string; message: string; detail?: string };
    if (failure.detail) this.o.log.warn({ conversion: row.id, code: failure.code, detail: failure.detail }, 'conversion failed');
    const error = { code: failure.code, message: failure.message };
    let events = 0;
    const stored = await this.o.conversions.finish(
      row.id,
      owner,
      { status: 'failed', output: null, output_path: null, error: JSON.stringify(error), completed_at: now.toISOString(), expires_at: this.expiry(now) },
      async (trx) => (events = await this.recordEvent(trx, row, { status: 'failed', output: null, error }, now)),
    );
    if (events) this.o.events?.notify();
    // A conversion that fails is not charged (charging.ts, convert-decisions.md item 18).
    if (!stored) await this.letGo(row, owner);
    else if (refundsFailure(failure.code)) await this.o.quota.refundCharge(row.account_id, row.quota_period, row.units);
  }

  /** The credential for a stored `sign` option, or undefined (no `sign`; the certificate deleted since). */
  private async signingCredential(accountId: string, sign: unknown): Promise<SigningCredential | undefined> {
    if (!sign || typeof sign !== 'object' || !this.o.signing) return undefined;
    const certificate = (sign as { certificate?: unknown }).certificate;
    return this.o.signing.credential(accountId, typeof certificate === 'string' ? certificate : 'operator');
  }

  /** Uploads a finished output to the conversion's S3 bucket, if it asked; the export's record, or undefined. */
  private async exportOutput(row: ConversionRow, file: { path: string; filename: string; format: string; mime_type: string; sha256: string }, signal: AbortSignal): Promise<ExportRecord | undefined> {
    if (!row.export) return undefined;
    const record = JSON.parse(row.export) as ExportRecord;
    const key = expandKey(record.key_template, { id: row.id, filename: file.filename, format: file.format, date: new Date(row.created_at) });
    if (!this.o.exporter || !row.export_credentials) {
      return { ...record, key, status: 'failed', etag: null, error: { code: 'export_failed', message: 'This process does not export to S3, or the export’s credentials are gone; nothing was uploaded.' }, completed_at: this.o.clock().toISOString() };
    }
    const done = await this.o.exporter.run(record, row.export_credentials, row.id, { path: file.path, key, mime_type: file.mime_type, sha256: file.sha256 }, this.o.clock, signal);
    if (done.error) this.o.log.warn({ conversion: row.id, bucket: done.bucket, key: done.key, error: done.error.message }, 'export to S3 failed');
    return done;
  }

  /**
   * The engine stopped without a stored outcome: the process is stopping (hand it back,
   * queued again at once) or the record was shredded or taken over (let go of the lease).
   */
  private async letGo(row: ConversionRow, owner: string): Promise<void> {
    if (this.stopping && (await this.o.conversions.release(row.id, owner))) {
      await this.o.queue?.add([{ id: `${row.id}.${randomUUID()}`, data: { id: row.id } }]);
      return;
    }
    await this.o.conversions.dropLease(row.id, owner);
  }

  /** Writes a finished conversion's webhook event in the transaction of its outcome; the deliveries it made. */
  private async recordEvent(trx: Kysely<ConvertTables>, row: ConversionRow, outcome: Parameters<typeof conversionEvent>[1], now: Date): Promise<number> {
    if (!this.o.events) return 0;
    const payload = conversionEvent(row, outcome, this.o.publicBaseUrl ?? '', now);
    const recorded = await this.o.events.record(row.account_id, String(payload.event), payload, now, trx, { targetUrl: row.webhook_url ?? undefined });
    return recorded.deliveries;
  }

  private expiry(from: Date): string {
    return new Date(from.getTime() + this.o.retentionMs).toISOString();
  }
}

/** Removes every output file a conversion's attempts may have left. */
export async function removeOutputs(store: FileStore, row: Pick<ConversionRow, 'id' | 'target_format'>): Promise<void> {
  for (let attempt = 0; attempt <= MAX_ATTEMPTS; attempt++) await store.remove(store.outputPath(row.id, row.target_format, attempt));
}
