import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { answeredStamps, detectFormat, PAGE_OPTION_NAMES, pageOptionsRecord, PDF_ARCHIVE_OPTION_NAMES, pdfArchiveOptionsRecord, PDF_FORM_OPTION_NAMES, pdfFormOptionsRecord, PDF_MARKUP_OPTION_NAMES, pdfMarkupRecord, quote, SIGN_OPTION_NAMES, VIDEO_OPTION_NAMES, videoOptionsRecord, type Converter, type FormValue } from '@mailconv/converter';
import { AppError, isStorageFull, newId, quotaRetryAfter, randomBase62, type BullWorkQueue, type DiskSpace, type QuotaLedger, type WebhooksService } from '@mailconv/platform';
import type { ConvertPlan } from '../plans.js';
import type { ConversionsRepository} from '../repositories/conversions.repository.js';
import { type ConversionRow, type ConversionStatus } from '../repositories/conversions.repository.js';
import type { UploadsRepository} from '../repositories/uploads.repository.js';
import { type UploadRow } from '../repositories/uploads.repository.js';
import type { FileStore } from '../storage/file-store.js';
import { TooLargeError } from '../storage/file-store.js';
import { refundsShred } from './charging.js';
import { removeOutputs, type ConversionMessage, type ConversionWorker } from './conversion-worker.js';
import { safeFilename } from './filenames.js';
import { failureError, preflightUpload } from './preflight.js';
import { FORBIDDEN_FETCH_HEADERS } from './schemas.js';
import type { ExportRecord, S3Exporter } from './s3-export.js';
import { storedSign, type SigningCertificates, type StoredSign } from './signing-certificates.js';
import type { UrlFetcher } from './url-fetcher.js';

/** The owner of a request: account and plan. */
export interface Owner {
  accountId: string;
  plan: ConvertPlan;
}

/** The record's `options` (convert-decisions.md item 5), each null when not given. */
export interface RecordOptions {
  preset: string | null;
  quality: number | null;
  page_range: string | null;
  ocr_language: string | null;
  max_output_bytes: number | null;
  /** Extension (issue #13): present only when asked for. */
  remove_active_content?: boolean;
  /** Extensions (issue 12, PDF operations): present only when asked for. */
  compression?: string;
  rotate?: number;
  watermark?: string;
  /** Extensions: `true` when a password was given; the password itself is never answered. */
  password?: true;
  set_password?: true;
  split?: true;
  /** Extensions (issue 22): the PDF's title and author, present only when asked for. */
  title?: string;
  author?: string;
  /** Extension (issue 24): each file of an archive converted; present only when asked for. */
  batch?: true;
  /** Extension (issue 31): the source's photo metadata copied (`keep`, `keep_location`); absent: stripped. */
  photo_metadata?: string;
  /** Extension (issue 31): the frame of an animated source a still output shows (1-based); absent: the first. */
  frame?: number;
  /** Extensions (issue 22, HTML rendered by the browser): present only when asked for, normalised. */
  paper?: string;
  landscape?: boolean;
  margin?: string;
  scale?: number;
  print_background?: boolean;
  prefer_css_page_size?: boolean;
  header_html?: string;
  footer_html?: string;
  media?: string;
  wait_for?: string;
  single_page?: boolean;
  viewport_width?: number;
  device_scale?: number;
  css?: string;
  /** Extensions (issue 31, video → gif, webp, jpg, png): present only when asked for. */
  start?: number;
  duration?: number;
  fps?: number;
  width?: number;
  loop?: number;
  animated?: boolean;
  /** Extensions (issue 25, PDF forms and metadata): present only when asked for; form_data as the names of the fields filled. */
  form_data?: string[];
  flatten?: true;
  metadata?: Record<string, string | readonly string[]>;
  /** Extension (issue 25): present when the PDF was asked to be signed, with the certificate's subject only. */
  sign?: { signed: true; subject: string };
  /** Extensions (issue 25, PDF/A and PDF/UA): present only when asked for. */
  pdfa?: string;
  pdf_ua?: true;
  language?: string;
  /** Extensions (issue 25, redaction and page marks on PDF outputs): present only when asked for, normalised. */
  redact?: Record<string, unknown>;
  page_numbers?: Record<string, unknown>;
  bates?: Record<string, unknown>;
  stamps?: Record<string, unknown>[];
  header?: string;
  footer?: string;
}

/**
 * The options as stored for the worker (which may be another process): the passwords and
 * the form's values themselves, which {@link ConversionService.record} does not answer.
 */
type StoredOptions = Omit<RecordOptions, 'password' | 'set_password' | 'form_data' | 'sign'> & { password?: string; set_password?: string; form_data?: Record<string, FormValue> } & StoredSign;

/** The stored options as answered: secrets replaced by `true`, a form's values by the names of its fields filled, stamp images by their SHA-256 and size. */
function answeredOptions(stored: StoredOptions): RecordOptions {
  const { password, set_password, form_data, sign, sign_subject, ...rest } = stored;
  return {
    ...rest,
    ...(password !== undefined ? { password: true } : {}),
    ...(set_password !== undefined ? { set_password: true } : {}),
    ...(form_data !== undefined ? { form_data: Object.keys(form_data).sort() } : {}),
    ...(sign !== undefined ? { sign: { signed: true as const, subject: sign_subject ?? '' } } : {}),
    ...(rest.stamps ? { stamps: answeredStamps(rest.stamps) } : {}),
  };
}

/** The record's `output`: the file's name, format, size, SHA-256 and whichever of pages, size, duration apply. */
export interface OutputRecord {
  filename: string;
  format: string;
  mime_type: string;
  size_bytes: number;
  sha256: string;
  pages?: number;
  width?: number;
  height?: number;
  duration_s?: number;
  /** Extension (issue 22): requests a page rendered by the browser made that were refused. */
  blocked_requests?: number;
  /** Extension (issue 25): the boxes a `redact` conversion redacted. */
  redacted_areas?: number;
  /** Extension (issue 24): a batch's files, converted and failed. */
  files?: { total: number; converted: number; failed: number };
  /** The engine chain that produced it (convert-decisions.md item 19). */
  engines?: string[];
}

/** The conversion record as the API answers it (convert-decisions.md item 5). */
export interface ConversionRecord {
  success: true;
  id: string;
  status: ConversionStatus;
  /** `url`: extension, present when the source was fetched from one (the address that answered). */
  source: { upload_id: string; format: string; size_bytes: number; sha256: string; url?: string };
  target_format: string;
  options: RecordOptions;
  output: OutputRecord | null;
  download_token: string | null;
  download_url: string | null;
  status_url: string;
  error: { code: string; message: string } | null;
  /** Extension (issue 24): the export to S3-compatible storage, when one was asked for (never its credentials). */
  export?: ExportRecord;
  /** Extension (issue 24): the per-request `webhook_url`, when one was given. */
  webhook_url?: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  expires_at: string;
}

/** What a download needs: the open record and the file on disk. */
export interface DownloadTarget {
  path: string;
  filename: string;
  mime_type: string;
  size_bytes: number;
  sha256: string;
}

/** The option names a conversion request may carry besides `target_format`. */
export const OPTION_NAMES = ['preset', 'quality', 'page_range', 'ocr_language', 'max_output_bytes', 'remove_active_content', 'compression', 'rotate', 'watermark', 'password', 'set_password', 'split', 'batch', 'title', 'author', 'photo_metadata', 'frame', ...VIDEO_OPTION_NAMES, ...PAGE_OPTION_NAMES, ...PDF_FORM_OPTION_NAMES, ...PDF_MARKUP_OPTION_NAMES, ...SIGN_OPTION_NAMES, ...PDF_ARCHIVE_OPTION_NAMES] as const;

export interface ConversionServiceDeps {
  converter: Converter;
  store: FileStore;
  /** Free space of the storage folder (label `storage`) against the floor. */
  disk: DiskSpace;
  uploads: UploadsRepository;
  conversions: ConversionsRepository;
  quota: QuotaLedger;
  /** The worker of this process (role `worker` or both), or null (role `api`). */
  worker: ConversionWorker | null;
  /** BullMQ (`CONVERT_REDIS_URL`): new conversions are announced to every worker process. */
  queue: BullWorkQueue<ConversionMessage> | null;
  /** The workers' lease: how long a shred waits at most for a holder that stopped answering. */
  leaseMs: number;
  clock: () => Date;
  retentionMs: number;
  publicBaseUrl: string;
  log: FastifyBaseLogger;
  /** Fetches URLs through the egress guard (imports); absent: `url` is refused. */
  urls?: UrlFetcher;
  /** Checks a per-request `webhook_url` (extension, issue 24); absent: `webhook_url` is refused. */
  webhooks?: WebhooksService;
  /** The operator's and the accounts' signing certificates (issue 25); absent: `sign` is refused as not configured. */
  signing?: SigningCertificates;
  /** Accepts `export` objects (S3-compatible storage, issue 24); absent: `export` is refused. */
  exporter?: S3Exporter;
}

/**
 * Uploads, conversions, downloads and shredding. A conversion is stored `queued` and run by
 * a {@link ConversionWorker} of any process (announced through BullMQ, or found in the
 * database); each is charged one quota unit when it is accepted and refunded if it fails
 * or is shredded before it finishes.
 */
export class ConversionService {
  constructor(private readonly deps: ConversionServiceDeps) {}

  /**
   * Stores an upload while hashing it; over the plan's size the partial file is removed
   * and 413 `file_too_large` thrown at once. The format is detected from the bytes.
   */
  async upload(owner: Owner, clientFilename: string, stream: Readable): Promise<UploadRow> {
    return this.keep(owner, clientFilename, stream, null);
  }

  /**
   * Imports a URL as an upload (extension, issue 22): fetched through the egress guard
   * (public addresses only, pinned, redirects re-checked, a time-out), capped at the plan's
   * file size, then stored, hashed and detected like any upload. An HTML page keeps its
   * address, so that it is rendered there and its stylesheets, images and fonts are fetched
   * through the same guard.
   */
  async importUrl(owner: Owner, url: string, how: { filename?: string; headers?: Readonly<Record<string, string>> } = {}): Promise<UploadRow> {
    if (!this.deps.urls) throw new AppError('invalid_request', 'This service does not fetch URLs.', { field: 'url' });
    const forbidden = Object.keys(how.headers ?? {}).find((h) => FORBIDDEN_FETCH_HEADERS.includes(h.toLowerCase()) || h.toLowerCase().startsWith('proxy-'));
    if (forbidden) throw new AppError('invalid_request', `headers: ${forbidden} is set by the service itself and cannot be sent.`, { field: 'headers' });
    const opened = await this.deps.urls.open(url, how.headers);
    try {
      return await this.keep(owner, how.filename ?? opened.filename, opened.body, opened.url);
    } catch (err) {
      if (err instanceof AppError || isStorageFull(err)) throw err;
      throw opened.readFailure(err);
    } finally {
      opened.done();
      opened.body.destroy();
    }
  }

  private async keep(owner: Owner, clientFilename: string, stream: Readable, sourceUrl: string | null): Promise<UploadRow> {
    const now = this.deps.clock();
    const id = newId('upl', now.getTime());
    const path = this.deps.store.uploadPath(id);
    let stored;
    try {
      stored = await this.deps.store.write(stream, path, owner.plan.maxFileBytes);
    } catch (err) {
      if (err instanceof TooLargeError) {
        throw new AppError('file_too_large', `The file is over the ${owner.plan.maxFileBytes} bytes your plan accepts.`, { max_file_bytes: owner.plan.maxFileBytes });
      }
      throw err;
    }
    const filename = safeFilename(clientFilename);
    const detected = await detectFormat(path, filename);
    if (!detected) {
      await this.deps.store.remove(path);
      throw new AppError('unsupported_format', 'The file’s format is not one this service reads; see GET /api/v1/formats.');
    }
    const row: UploadRow = {
      id,
      account_id: owner.accountId,
      filename,
      format: detected.ext,
      mime_type: detected.mime_type,
      size_bytes: stored.size_bytes,
      sha256: stored.sha256,
      created_at: now.toISOString(),
      expires_at: this.expiry(now),
      deleted_at: null,
      source_url: sourceUrl,
    };
    try {
      await this.deps.uploads.insert(row);
    } catch (err) {
      // No row (a full database disk, the database gone): the bytes must not stay without one (issue 28).
      await this.deps.store.remove(path);
      throw err;
    }
    return row;
  }

  /**
   * Refuses, with 507 `insufficient_storage`, an upload whose declared length would leave
   * the storage folder under its free-space floor — before a byte of it is read (issue 28).
   */
  async assertRoomForUpload(declaredBytes: number): Promise<void> {
    await this.deps.disk.assertRoom('storage', declaredBytes);
  }

  /**
   * The merge extension (issues 12 and 24): the caller's uploads, in order, joined into one
   * new upload (`merged.pdf`, same retention) — PDFs as they are, any other upload that
   * converts to PDF (documents, slides, sheets, images, HTML, …) converted first while the
   * request waits — from which an ordinary pdf → pdf conversion starts with the options
   * given, so it is charged (once), waited for, downloaded and shredded like any other.
   * Refused before any charge: unknown or removed uploads (404/410), uploads that do not
   * convert to PDF (422 `unsupported_conversion`, naming the document), one that fails to
   * convert (422 `conversion_failed`), encrypted PDFs (422 `password_required`), too many
   * pages, a merged file over the plan's size (413).
   */
  async merge(owner: Owner, uploadIds: readonly string[], rawOptions: Readonly<Record<string, unknown>>): Promise<ConversionRow> {
    const uploads: UploadRow[] = [];
    for (const id of uploadIds) uploads.push(await this.findUpload(owner, id));
    const now = this.deps.clock();
    const id = newId('upl', now.getTime());
    const path = this.deps.store.uploadPath(id);
    // Uploads that are not PDFs are converted to PDF first (each its own sandboxed conversion), in order.
    const merged = await this.deps.converter.mergeDocuments(uploads.map((u) => ({ path: this.deps.store.uploadPath(u.id), format: u.format })), path, undefined, id);
    if (!merged.ok) {
      await this.deps.store.remove(path);
      throw failureError(merged.error);
    }
    if (merged.output.size_bytes > owner.plan.maxFileBytes) {
      await this.deps.store.remove(path);
      throw new AppError('file_too_large', `The merged PDF is over the ${owner.plan.maxFileBytes} bytes your plan accepts.`, { max_file_bytes: owner.plan.maxFileBytes });
    }
    const row: UploadRow = {
      id,
      account_id: owner.accountId,
      filename: 'merged.pdf',
      format: 'pdf',
      mime_type: 'application/pdf',
      size_bytes: merged.output.size_bytes,
      sha256: merged.output.sha256,
      created_at: now.toISOString(),
      expires_at: this.expiry(now),
      deleted_at: null,
      source_url: null,
    };
    await this.deps.uploads.insert(row);
    try {
      return await this.start(owner, row, 'pdf', rawOptions);
    } catch (err) {
      await this.discardUpload(row);
      throw err;
    }
  }

  /** Removes an upload nobody saw (a one-step request that failed after storing its file). */
  async discardUpload(upload: UploadRow): Promise<void> {
    await this.deps.converter.removeJobFolders(upload.id);
    await this.deps.store.remove(this.deps.store.uploadPath(upload.id));
    await this.deps.uploads.markDeleted(upload.id, this.deps.clock());
  }

  /** The caller's upload, or 404; 410 `gone` once shredded or expired. */
  async findUpload(owner: Owner, uploadId: string): Promise<UploadRow> {
    const upload = await this.deps.uploads.find(owner.accountId, uploadId);
    if (!upload) throw new AppError('not_found', `No upload ${quote(uploadId)}.`, { field: 'upload_id' });
    if (upload.deleted_at) throw new AppError('gone', `Upload ${quote(uploadId)} was removed (shredded or expired).`, { field: 'upload_id' });
    return upload;
  }

  /** Fails fast (before any quota is charged) when the quota month is already used up. */
  async assertQuotaLeft(owner: Owner): Promise<void> {
    const used = await this.deps.quota.used(owner.accountId, this.deps.clock());
    if (used >= owner.plan.monthlyQuota) throw quotaExceeded(owner.plan.monthlyQuota, used, this.deps.clock());
  }

  /**
   * Validates the pair and options (400 naming the field, 422 `unsupported_conversion`),
   * charges one unit — a batch one per file of its archive — (429 `quota_exceeded`), stores
   * the record and queues the work.
   */
  async start(owner: Owner, upload: UploadRow, targetFormat: string, fields: Readonly<Record<string, unknown>>): Promise<ConversionRow> {
    const { webhook_url: webhookUrl, export: exportSpec, ...rawOptions } = fields;
    const plan = this.deps.converter.plan(upload.format, targetFormat, rawOptions);
    if (!plan.ok) throw failureError(plan.error);
    // Bombs, encrypted PDFs and a page_range past the last page are refused before any charge.
    const facts = await preflightUpload(this.deps.converter, this.deps.uploads, this.deps.store.uploadPath(upload.id), upload, targetFormat, rawOptions);
    const units = plan.options.batch ? (facts.files ?? 1) : 1;
    const options: StoredOptions = {
      preset: plan.options.preset?.name ?? null,
      quality: plan.options.quality ?? null,
      page_range: plan.options.pageRangeText ?? null,
      ocr_language: plan.options.ocrLanguages?.join('+') ?? null,
      max_output_bytes: plan.options.maxOutputBytes ?? null,
      ...(plan.options.removeActiveContent ? { remove_active_content: true } : {}),
      // Only an explicit compression is stored: the compress preset sets its own again when the worker parses the options.
      ...(rawOptions.compression !== undefined && plan.options.compression ? { compression: plan.options.compression } : {}),
      ...(plan.options.rotate ? { rotate: plan.options.rotate } : {}),
      ...(plan.options.watermark ? { watermark: plan.options.watermark } : {}),
      ...(plan.options.split ? { split: true as const } : {}),
      ...(plan.options.batch ? { batch: true as const } : {}),
      ...(plan.options.photoMetadata ? { photo_metadata: plan.options.photoMetadata } : {}),
      ...(plan.options.frame !== undefined ? { frame: plan.options.frame } : {}),
      ...(plan.options.title !== undefined ? { title: plan.options.title } : {}),
      ...(plan.options.author !== undefined ? { author: plan.options.author } : {}),
      ...pageOptionsRecord(plan.options.page),
      ...videoOptionsRecord(plan.options.video),
      // form_data's values are kept for the worker like the passwords below; answered as the field names only.
      ...pdfFormOptionsRecord(plan.options.pdfForm),
      ...pdfArchiveOptionsRecord(plan.options.pdfArchive),
      ...pdfMarkupRecord(plan.options.markup),
      // Kept in the record's row for the worker to use; never answered (see answeredOptions).
      ...(plan.options.password !== undefined ? { password: plan.options.password } : {}),
      ...(plan.options.setPassword !== undefined ? { set_password: plan.options.setPassword } : {}),
      // The certificate is checked (the operator's is configured; an account's id is the caller's) before any charge.
      ...(plan.options.sign ? await storedSign(plan.options.sign, owner.accountId, this.deps.signing) : {}),
    };
    const webhook = webhookUrl === undefined ? null : await this.webhookTarget(owner, webhookUrl);
    const now = this.deps.clock();
    const id = newId('cnv', now.getTime());
    // The export's target is checked (the egress guard) and its credentials sealed for this record before any charge.
    const exported = exportSpec === undefined ? null : await this.exportTarget(exportSpec, id);
    const charge = await this.deps.quota.charge(owner.accountId, units, owner.plan.monthlyQuota, now);
    if (!charge.ok) throw quotaExceeded(charge.limit, charge.used, now, units);
    const token = `dl_${randomBase62(32)}`;
    const row: ConversionRow = {
      id,
      account_id: owner.accountId,
      upload_id: upload.id,
      status: 'queued',
      target_format: plan.target.ext,
      options: JSON.stringify(options),
      output: null,
      output_path: null,
      download_token: token,
      token_hash: hashToken(token),
      error: null,
      quota_period: charge.period,
      created_at: now.toISOString(),
      started_at: null,
      completed_at: null,
      expires_at: this.expiry(now),
      lease_owner: null,
      lease_until: null,
      attempts: 0,
      account_limit: owner.plan.maxConcurrentJobs,
      webhook_url: webhook,
      units,
      export: exported ? JSON.stringify(exported.record) : null,
      export_credentials: exported?.sealed ?? null,
    };
    try {
      await this.deps.conversions.insert(row);
    } catch (err) {
      await this.deps.quota.refundCharge(owner.accountId, charge.period, units);
      throw err;
    }
    await this.announce(row.id);
    return row;
  }

  /** A per-request `webhook_url` checked as an endpoint's is (public HTTPS unless the operator allows otherwise), or 400 naming it. */
  private async webhookTarget(owner: Owner, url: unknown): Promise<string> {
    if (typeof url !== 'string' || url === '') throw new AppError('invalid_request', "'webhook_url' must be an https URL.", { field: 'webhook_url' });
    if (!this.deps.webhooks) throw new AppError('invalid_request', 'This service sends no webhooks.', { field: 'webhook_url' });
    return this.deps.webhooks.checkRequestTarget(owner.accountId, url);
  }

  /** An `export` object accepted by the exporter (400 naming `export.<field>`), or refused when exports are off. */
  private async exportTarget(spec: unknown, id: string): Promise<Awaited<ReturnType<S3Exporter['accept']>>> {
    if (!this.deps.exporter) throw new AppError('invalid_request', 'This service does not export to S3.', { field: 'export' });
    return this.deps.exporter.accept(spec, id);
  }

  /** Tells the workers: through BullMQ to whichever process is free, else to this process's worker (others poll the database). */
  private async announce(id: string): Promise<void> {
    if (!this.deps.queue) return this.deps.worker?.kick();
    try {
      await this.deps.queue.add([{ id, data: { id } }]);
    } catch (err) {
      // Stored all the same: the workers' database poll finds it.
      this.deps.log.error({ err, conversion: id }, 'could not enqueue a conversion');
    }
  }

  /** Waits up to `ms` for the conversion to finish, wherever it runs (the `wait` window of `POST /convert`). */
  async waitFor(id: string, ms: number): Promise<void> {
    if (ms <= 0) return;
    const deadline = Date.now() + ms;
    const local = this.deps.worker?.localDone(id);
    if (local) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([local, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
      return;
    }
    // Queued, or running in another process: the database says when it is done. Asked often
    // at first (a quick conversion claimed by this process a moment later is then waited for
    // directly), then every WAIT_POLL_MS.
    for (let pause = 5; ; pause = Math.min(pause * 2, WAIT_POLL_MS)) {
      const state = await this.deps.conversions.state(id);
      if (!state || (state.status !== 'queued' && state.status !== 'processing')) return;
      const left = deadline - Date.now();
      if (left <= 0) return;
      const local = this.deps.worker?.localDone(id);
      if (local) return this.waitFor(id, left);
      await sleep(Math.min(pause, left));
    }
  }

  /** The caller's conversion, or 404 (another account's record is 404 too). */
  async find(owner: Owner, id: string): Promise<ConversionRow> {
    const row = await this.deps.conversions.find(owner.accountId, id);
    if (!row) throw new AppError('not_found', `No conversion ${quote(id)}.`);
    return row;
  }

  /** The caller's `limit` most recent conversions as records, newest first. */
  async recent(owner: Owner, limit: number): Promise<ConversionRecord[]> {
    const rows = await this.deps.conversions.recent(owner.accountId, limit);
    return Promise.all(rows.map((row) => this.record(row)));
  }

  /** The record as answered, with its source upload's fields. */
  async record(row: ConversionRow): Promise<ConversionRecord> {
    const upload = await this.deps.uploads.find(row.account_id, row.upload_id);
    const completed = row.status === 'completed';
    return {
      success: true,
      id: row.id,
      status: row.status as ConversionStatus,
      source: { upload_id: row.upload_id, format: upload?.format ?? '', size_bytes: upload?.size_bytes ?? 0, sha256: upload?.sha256 ?? '', ...(upload?.source_url ? { url: upload.source_url } : {}) },
      target_format: row.target_format,
      options: answeredOptions(JSON.parse(row.options) as StoredOptions),
      output: row.output && completed ? (JSON.parse(row.output) as OutputRecord) : null,
      download_token: completed ? row.download_token : null,
      download_url: completed ? `${this.deps.publicBaseUrl}/api/v1/download/${row.download_token}` : null,
      status_url: this.statusUrl(row.id),
      error: row.error ? (JSON.parse(row.error) as { code: string; message: string }) : null,
      ...(row.export ? { export: JSON.parse(row.export) as ExportRecord } : {}),
      ...(row.webhook_url ? { webhook_url: row.webhook_url } : {}),
      created_at: row.created_at,
      started_at: row.started_at,
      completed_at: row.completed_at,
      expires_at: row.expires_at,
    };
  }

  statusUrl(id: string): string {
    return `${this.deps.publicBaseUrl}/api/v1/convert/${id}/status`;
  }

  /**
   * Shred: the record becomes `shredded` first (so a finishing engine cannot publish its
   * output), a running conversion is stopped wherever it runs and awaited, then the output
   * and the source upload leave the disk, all before the answer. A conversion shredded before
   * it finished is refunded. Shredding again answers the same record.
   */
  async shred(owner: Owner, id: string): Promise<ConversionRow> {
    const row = await this.find(owner, id);
    const now = this.deps.clock();
    const previous = await this.deps.conversions.close(row.id, 'shredded', now);
    // Shredded before it finished: not charged (charging.ts).
    if (previous && refundsShred(previous.status)) {
      await this.deps.quota.refundCharge(previous.account_id, previous.quota_period, previous.units);
      if (previous.lease_owner && !(await this.deps.worker?.abortLocal(row.id))) await this.awaitRelease(row.id);
    }
    await removeOutputs(this.deps.store, row);
    // Every copy: a process killed mid-conversion left a job folder holding a link to (or a
    // copy of) the upload; so may a killed preflight (tagged with the upload's id).
    await this.deps.converter.removeJobFolders(row.id);
    await this.deps.converter.removeJobFolders(row.upload_id);
    await this.deps.store.remove(this.deps.store.uploadPath(row.upload_id));
    await this.deps.uploads.markDeleted(row.upload_id, now);
    return this.find(owner, id);
  }

  /**
   * Waits until the process running a shredded conversion has stopped its engine and let go
   * (it learns of the shred at its next lease renewal, about a second), or until its lease
   * runs out (that process died or hangs).
   */
  private async awaitRelease(id: string): Promise<void> {
    const deadline = Date.now() + this.deps.leaseMs + WAIT_POLL_MS;
    while (Date.now() < deadline) {
      const state = await this.deps.conversions.state(id);
      if (!state?.lease_owner || !state.lease_until || state.lease_until < this.deps.clock().toISOString()) return;
      await sleep(WAIT_POLL_MS);
    }
  }

  /**
   * Resolves a download: the token must belong to a conversion of the caller (and of `jobId`
   * when given), else 404; shredded or expired is 410 `gone`; not finished is 409.
   */
  async download(owner: Owner, token: string, jobId?: string): Promise<DownloadTarget> {
    const row = await this.deps.conversions.findByTokenHash(hashToken(token));
    if (!row || row.account_id !== owner.accountId || (jobId !== undefined && row.id !== jobId)) {
      throw new AppError('not_found', 'No download for this token.');
    }
    return this.outputOf(row);
  }

  /** A conversion's output on disk: 410 `gone` once shredded or expired, 409 `conflict` before it completed. */
  outputOf(row: ConversionRow): DownloadTarget {
    const now = this.deps.clock();
    if (row.status === 'shredded' || row.status === 'expired' || (row.status === 'completed' && row.expires_at <= now.toISOString())) {
      throw new AppError('gone', `The output of ${row.id} was removed (${row.status === 'shredded' ? 'shredded' : 'expired'}).`);
    }
    if (row.status !== 'completed' || !row.output || !row.output_path) {
      throw new AppError('conflict', `Conversion ${row.id} is ${row.status}; there is no output to download.`, { status: row.status });
    }
    const output = JSON.parse(row.output) as { filename: string; mime_type: string; size_bytes: number; sha256: string };
    return { path: row.output_path, filename: output.filename, mime_type: output.mime_type, size_bytes: output.size_bytes, sha256: output.sha256 };
  }

  /**
   * The retention sweeper: outputs of finished conversions past `expires_at` are removed and
   * their records marked `expired`; uploads past theirs leave the disk.
   */
  async sweep(now = this.deps.clock()): Promise<{ conversions: number; uploads: number }> {
    // Files go first, records after: a record that reads `expired` has nothing left on disk.
    const uploads = await this.deps.uploads.expired(now);
    for (const upload of uploads) {
      await this.deps.converter.removeJobFolders(upload.id);
      await this.deps.store.remove(this.deps.store.uploadPath(upload.id));
      await this.deps.uploads.markDeleted(upload.id, now);
    }
    const conversions = await this.deps.conversions.expired(now);
    for (const row of conversions) {
      await this.deps.converter.removeJobFolders(row.id);
      await removeOutputs(this.deps.store, row);
      await this.deps.conversions.close(row.id, 'expired', now);
    }
    return { conversions: conversions.length, uploads: uploads.length };
  }

  private expiry(from: Date): string {
    return new Date(from.getTime() + this.deps.retentionMs).toISOString();
  }
}

/** How often a wait or a shred looks at a conversion running in another process. */
const WAIT_POLL_MS = 200;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** SHA-256 of a download token (hex); the index is searched by this, never by the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 429 `quota_exceeded`, with `Retry-After` the seconds until the quota month resets. */
function quotaExceeded(limit: number, used: number, now: Date, needed = 1): AppError {
  if (needed > 1 && used + needed > limit && used < limit) {
    return new AppError('quota_exceeded', `This batch needs ${needed} conversions (one per file); ${limit - used} of this month’s ${limit} are left.`, { limit, used }, quotaRetryAfter(now));
  }
  return new AppError('quota_exceeded', `This month’s ${limit} conversions are used up.`, { limit, used }, quotaRetryAfter(now));
}

