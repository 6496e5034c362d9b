import { setTimeout as sleep } from 'node:timers/promises';
import { fileBlob, saveBody, sha256FromDigest, type SavedFile } from './files.js';
import type { paths } from './generated/convert-api.js';
import { ChecksumError, HttpCore, type ClientOptions } from './http.js';

type Json<P extends keyof paths, M extends 'get' | 'post' | 'delete', S extends number> = paths[P][M] extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;

type Body<P extends keyof paths, M extends 'post' | 'delete'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer T } } } ? T : never;

export type Formats = Json<'/api/v1/formats', 'get', 200>;
export type Targets = Json<'/api/v1/formats/{ext}/targets', 'get', 200>;
export type Usage = Json<'/api/v1/account/usage', 'get', 200>;
export type Limits = Json<'/api/v1/account/limits', 'get', 200>;
export type Upload = Json<'/api/v1/upload', 'post', 201>;
export type ConvertApiKeyList = Json<'/api/dashboard/api-keys', 'get', 200>;
export type ConvertApiKeyCreated = Json<'/api/dashboard/api-keys', 'post', 200>;
/** The conversion record (also the job record): status, output metadata, SHA-256, download URL. */
export type Conversion = Json<'/api/v1/jobs/{id}', 'get', 200>;
export type ConvertWebhookList = Json<'/api/dashboard/webhooks', 'get', 200>;
export type ConvertWebhookCreated = Json<'/api/dashboard/webhooks', 'post', 200>;
export type ConvertWebhookCreate = Body<'/api/dashboard/webhooks', 'post'>;
export type ConvertDeliveryLog = Json<'/api/dashboard/webhooks/{id}/deliveries', 'get', 200>;
export type RequestSecret = Json<'/api/dashboard/webhooks/request-secret', 'post', 200>;
export type ShareLinkCreated = Json<'/api/v1/jobs/{id}/links', 'post', 201>;
export type ShareLinkList = Json<'/api/v1/jobs/{id}/links', 'get', 200>;
/** The options of a conversion (every field optional). */
export type ConversionOptions = Omit<NonNullable<paths['/api/v1/convert']['post']['requestBody']>['content']['application/json'], 'upload_id' | 'target_format'>;

/** A source file: a path on disk (streamed from disk, not read into memory), or bytes with a name. */
export type SourceFile = string | { data: Blob | Uint8Array; filename: string };

const FINAL = new Set(['completed', 'failed', 'shredded', 'expired']);

/**
 * Client of the file conversion API. Every endpoint, typed from the service's OpenAPI
 * document (`src/generated/convert-api.ts`).
 */
export class ConvertClient {
  readonly http: HttpCore;

  constructor(options: ClientOptions) {
    this.http = new HttpCore(options);
  }

  /** API keys of the account (`/api/dashboard/api-keys`, an extension of the contract). */
  readonly apiKeys = {
    list: (): Promise<ConvertApiKeyList> => this.http.json('GET', '/api/dashboard/api-keys'),
    create: (name: string): Promise<ConvertApiKeyCreated> => this.http.json('POST', '/api/dashboard/api-keys', { json: { name } }),
    revoke: (id: string): Promise<Json<'/api/dashboard/api-keys', 'delete', 200>> => this.http.json('DELETE', '/api/dashboard/api-keys', { query: { id } }),
  };

  /**
   * Completion webhooks (`/api/dashboard/webhooks`, an extension): endpoints told of
   * `conversion.completed` and `conversion.failed`, their delivery log, redelivery, and the
   * secret that signs deliveries to a per-request `webhook_url`.
   */
  readonly webhooks = {
    list: (): Promise<ConvertWebhookList> => this.http.json('GET', '/api/dashboard/webhooks'),
    create: (body: ConvertWebhookCreate): Promise<ConvertWebhookCreated> => this.http.json('POST', '/api/dashboard/webhooks', { json: body }),
    remove: (id: string): Promise<Json<'/api/dashboard/webhooks', 'delete', 200>> => this.http.json('DELETE', '/api/dashboard/webhooks', { query: { id } }),
    deliveries: (id: string, query: { limit?: number } = {}): Promise<ConvertDeliveryLog> => this.http.json('GET', `/api/dashboard/webhooks/${encodeURIComponent(id)}/deliveries`, { query }),
    redeliver: (id: string, deliveryId: string): Promise<Json<'/api/dashboard/webhooks/{id}/deliveries/{delivery_id}/redeliver', 'post', 200>> =>
      this.http.json('POST', `/api/dashboard/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`),
    /** Makes or replaces the per-request signing secret; the secret is in this answer only. */
    rotateRequestSecret: (): Promise<RequestSecret> => this.http.json('POST', '/api/dashboard/webhooks/request-secret'),
  };

  /**
   * Share links (`/api/v1/jobs/{id}/links`, an extension): a URL that downloads a completed
   * conversion's output without an API key until it expires (at most 7 days), is revoked, or
   * the conversion is shredded. The URL is in `create`'s answer only.
   */
  readonly shareLinks = {
    create: (conversionId: string, options: { expiresIn?: number } = {}): Promise<ShareLinkCreated> =>
      this.http.json('POST', `/api/v1/jobs/${encodeURIComponent(conversionId)}/links`, { json: options.expiresIn === undefined ? {} : { expires_in: options.expiresIn } }),
    list: (conversionId: string): Promise<ShareLinkList> => this.http.json('GET', `/api/v1/jobs/${encodeURIComponent(conversionId)}/links`),
    revoke: (conversionId: string, linkId: string): Promise<Json<'/api/v1/jobs/{id}/links/{link_id}', 'delete', 200>> =>
      this.http.json('DELETE', `/api/v1/jobs/${encodeURIComponent(conversionId)}/links/${encodeURIComponent(linkId)}`),
  };

  /** `GET /api/v1/formats`: every format, presets and OCR languages. */
  formats(): Promise<Formats> {
    return this.http.json('GET', '/api/v1/formats');
  }

  /** `GET /api/v1/formats/{ext}/targets`: what a source format converts to, with the options of each. */
  targets(ext: string): Promise<Targets> {
    return this.http.json('GET', `/api/v1/formats/${encodeURIComponent(ext)}/targets`);
  }

  /** `GET /api/v1/account/usage`. */
  usage(): Promise<Usage> {
    return this.http.json('GET', '/api/v1/account/usage');
  }

  /** `GET /api/v1/account/limits`. */
  limits(): Promise<Limits> {
    return this.http.json('GET', '/api/v1/account/limits');
  }

  /** `POST /api/v1/upload`: stores a file (not charged); answers its id, detected format and SHA-256. */
  async upload(file: SourceFile): Promise<Upload> {
    return this.http.json('POST', '/api/v1/upload', { form: await formWith(file, {}), timeoutMs: 600_000 });
  }

  /**
   * `POST /api/v1/upload` with a URL (extension): the service fetches it through its egress
   * guard (public addresses only, redirects re-checked, the plan's file size and a time-out
   * as caps) and stores it like an upload; `headers` are sent with the request (never
   * `Host`, `Cookie` or the like), `filename` names it (else the URL's or the answer's).
   */
  async importUrl(url: string, options: { headers?: Record<string, string>; filename?: string } = {}): Promise<Upload> {
    return this.http.json('POST', '/api/v1/upload', { json: { url, ...options }, timeoutMs: 600_000 });
  }

  /**
   * `POST /api/v1/convert`: converts an upload (`uploadId`) or a file sent along, waiting up
   * to `wait` seconds (default 30): the record is `completed` when it finished in time,
   * else still `queued`/`processing` (see {@link waitForConversion}).
   */
  async convert(source: { uploadId: string } | { file: SourceFile }, target: string, options: ConversionOptions & { wait?: number } = {}): Promise<Conversion> {
    const { wait, ...opts } = options;
    const query = { wait };
    const timeoutMs = ((wait ?? 30) + 60) * 1000;
    if ('uploadId' in source) return this.http.json('POST', '/api/v1/convert', { query, json: { upload_id: source.uploadId, target_format: target, ...opts }, timeoutMs });
    return this.http.json('POST', '/api/v1/convert', { query, form: await formWith(source.file, { target_format: target, ...opts }), timeoutMs: Math.max(timeoutMs, 600_000) });
  }

  /**
   * `POST /api/v1/merge` (extension): two to 50 uploads merged into one PDF in order — PDFs as
   * they are, other documents, slides, sheets, images and HTML converted to PDF first — then
   * a pdf → pdf conversion with `options`; answers like {@link convert}.
   */
  async merge(uploadIds: readonly string[], options: ConversionOptions & { wait?: number } = {}): Promise<Conversion> {
    const { wait, ...opts } = options;
    return this.http.json('POST', '/api/v1/merge', { query: { wait }, json: { upload_ids: [...uploadIds], ...opts }, timeoutMs: ((wait ?? 30) + 300) * 1000 });
  }

  /** `POST /api/v1/jobs`: upload and convert in one step; answers 202 at once with the queued record. */
  async createJob(file: SourceFile, target: string, options: ConversionOptions = {}): Promise<Conversion> {
    return this.http.json('POST', '/api/v1/jobs', { form: await formWith(file, { target_format: target, ...options }), timeoutMs: 600_000 });
  }

  /** `GET /api/v1/jobs/{id}` (the same record as `GET /api/v1/convert/{id}/status`). */
  getConversion(id: string): Promise<Conversion> {
    return this.http.json('GET', `/api/v1/jobs/${encodeURIComponent(id)}`);
  }

  /** `GET /api/v1/convert/{id}/status`. */
  status(id: string): Promise<Conversion> {
    return this.http.json('GET', `/api/v1/convert/${encodeURIComponent(id)}/status`);
  }

  /** `DELETE /api/v1/jobs/{id}`: shred — cancel if running, remove the source and the output. */
  shred(id: string): Promise<Conversion> {
    return this.http.json('DELETE', `/api/v1/jobs/${encodeURIComponent(id)}`);
  }

  /** Polls until the conversion is completed, failed, shredded or expired. */
  async waitForConversion(id: string, options: { intervalMs?: number; timeoutMs?: number; onProgress?: (record: Conversion) => void; signal?: AbortSignal } = {}): Promise<Conversion> {
    const deadline = Date.now() + (options.timeoutMs ?? 900_000);
    let interval = options.intervalMs ?? 500;
    for (;;) {
      const record = await this.getConversion(id);
      options.onProgress?.(record);
      if (FINAL.has(record.status)) return record;
      if (Date.now() + interval > deadline) throw new Error(`conversion ${id} is still ${record.status} after the wait`);
      await sleep(interval, undefined, { signal: options.signal });
      interval = Math.min(5_000, Math.round(interval * 1.25));
    }
  }

  /**
   * Streams a completed conversion's output to `path`, checking its SHA-256 against the
   * record's `output.sha256` and the answer's `Repr-Digest`/`Digest`: on a mismatch the file
   * is removed and {@link ChecksumError} thrown.
   */
  async download(record: Conversion, path: string, onProgress?: (bytes: number, total: number | undefined) => void): Promise<SavedFile> {
    if (record.status !== 'completed' || !record.download_url || !record.output) throw new Error(`conversion ${record.id} is ${record.status}; there is no output to download`);
    // The key goes only to the client's own origin: a download URL naming another host (a
    // misconfigured public base URL) is fetched by its path on the base URL instead.
    const named = new URL(record.download_url);
    const url = named.origin === new URL(this.http.baseUrl).origin ? named.toString() : this.http.url(`/api/v1/jobs/${encodeURIComponent(record.id)}/download/${encodeURIComponent(record.download_token ?? '')}`);
    const { response, headers } = await this.http.raw('GET', url, { timeoutMs: 600_000 });
    const announced = sha256FromDigest(headers);
    const expected = record.output.sha256;
    if (announced && announced !== expected) throw new ChecksumError(expected, announced);
    const total = Number(headers.get('content-length')) || undefined;
    return saveBody(response, path, expected, onProgress && ((bytes) => onProgress(bytes, total)));
  }

  /** Upload, convert, wait and download in one call: the output saved at `outPath`, checksum verified. */
  async convertFile(
    file: SourceFile,
    target: string,
    outPath: string,
    options: ConversionOptions & { onProgress?: (record: Conversion) => void; onDownload?: (bytes: number, total: number | undefined) => void } = {},
  ): Promise<{ record: Conversion; saved: SavedFile }> {
    const { onProgress, onDownload, ...opts } = options;
    const started = await this.createJob(file, target, opts);
    onProgress?.(started);
    const record = await this.waitForConversion(started.id, { onProgress });
    if (record.status !== 'completed') throw new Error(`conversion ${record.id} ${record.status}: ${record.error?.message ?? 'no output'}`);
    return { record, saved: await this.download(record, outPath, onDownload) };
  }
}

async function formWith(file: SourceFile, fields: Record<string, unknown>): Promise<FormData> {
  const form = new FormData();
  // An object option (export) goes as JSON text, as the form's schema says.
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  if (typeof file === 'string') {
    const { blob, filename } = await fileBlob(file);
    form.append('file', blob, filename);
  } else form.append('file', file.data instanceof Blob ? file.data : new Blob([file.data]), file.filename);
  return form;
}
