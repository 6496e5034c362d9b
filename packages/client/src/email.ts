import { setTimeout as sleep } from 'node:timers/promises';
import { csvRows, fileBlob, saveBody, type SavedFile } from './files.js';
import type { paths } from './generated/email-api.js';
import { HttpCore, type ClientOptions } from './http.js';

type Json<P extends keyof paths, M extends 'get' | 'post' | 'delete', S extends number> = paths[P][M] extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;
type Body<P extends keyof paths, M extends 'post' | 'delete'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer T } } } ? T : never;

export type VerificationResult = Json<'/api/validate-email', 'post', 200>;
export type SingleVerification = Json<'/api/v1/verify-single', 'post', 200>;
export type BatchVerification = Json<'/api/v1/verify-batch', 'post', 200>;
export type Account = Json<'/api/v1/account', 'get', 200>;
export type JobSubmitted = Json<'/api/v1/jobs', 'post', 202>;
export type JobList = Json<'/api/v1/jobs', 'get', 200>;
export type JobCancelled = Json<'/api/v1/jobs/{job_id}', 'delete', 200>;
export type ResultsPage = Json<'/api/v1/jobs/{job_id}/results', 'get', 200>;
export type JobResult = ResultsPage['results'][number];
export type JobResultsDeleted = Json<'/api/v1/jobs/{job_id}/results', 'delete', 200>;
/** A result's status, as the `status` filter of the results takes it. */
export type ResultStatus = JobResult['status'];

/**
 * Which results to read (extensions of the service): `status` keeps only rows with those
 * statuses (`['valid', 'risky']`: the sendable ones); `columns: 'all'` adds the sub-checks
 * (`normalized`, `syntax`, `dns`, `mx_count`, `mx_provider`, `smtp`, `catch_all`,
 * `disposable`, `role_based`, `free_provider`). `formulas` (CSV only): by default a cell
 * starting with `=`, `+`, `-`, `@`, a tab or a CR comes back with a leading `'` (so a
 * spreadsheet shows it instead of running it; the list's own cells too); `'keep'` returns
 * every cell exactly as sent, for a file read by a program.
 */
export interface ResultsFilter {
  status?: readonly ResultStatus[];
  columns?: 'default' | 'all';
  formulas?: 'escape' | 'keep';
}

const filterQuery = (filter: ResultsFilter = {}) => ({ status: filter.status?.join(','), columns: filter.columns, formulas: filter.formulas });
export type ApiKeyList = Json<'/api/dashboard/api-keys', 'get', 200>;
export type ApiKeyCreated = Json<'/api/dashboard/api-keys', 'post', 200>;
export type WebhookList = Json<'/api/dashboard/webhooks', 'get', 200>;
export type WebhookCreated = Json<'/api/dashboard/webhooks', 'post', 200>;
export type WebhookCreate = Body<'/api/dashboard/webhooks', 'post'>;
export type DeliveryLog = Json<'/api/dashboard/webhooks/{id}/deliveries', 'get', 200>;
export type Redelivery = Json<'/api/dashboard/webhooks/{id}/deliveries/{delivery_id}/redeliver', 'post', 200>;

/** The counters of a job, under both namings the contract allows (`valid` and `valid_count`, …). */
export interface JobCounters {
  valid: number;
  invalid: number;
  risky: number;
  unknown: number;
  valid_count: number;
  invalid_count: number;
  risky_count: number;
  unknown_count: number;
}

/** A job's status, with both counter namings filled whichever the service sent. */
export type JobStatus = Omit<Json<'/api/v1/jobs/{job_id}', 'get', 200>, keyof JobCounters> & JobCounters;

/**
 * Fills both counter namings from whichever is present (a service or proxy may send only
 * `valid` or only `valid_count`); 0 when neither is.
 */
export function normalizeCounters<T extends object>(job: T): T & JobCounters {
  const j = job as Record<string, unknown>;
  const n = (a: string, b: string) => (typeof j[a] === 'number' ? (j[a] as number) : typeof j[b] === 'number' ? (j[b] as number) : 0);
  const valid = n('valid', 'valid_count');
  const invalid = n('invalid', 'invalid_count');
  const risky = n('risky', 'risky_count');
  const unknown = n('unknown', 'unknown_count');
  return { ...job, valid, invalid, risky, unknown, valid_count: valid, invalid_count: invalid, risky_count: risky, unknown_count: unknown };
}

/** The contract recommends clients wait at least 5 s for a single verification (SMTP probes take seconds). */
export const MIN_SINGLE_TIMEOUT_MS = 5_000;

const FINAL = new Set(['completed', 'failed', 'cancelled']);

/** A job's list for upload: a file on disk (CSV, or text with one address per line), or bytes. */
export type JobFile = { path: string; column?: string } | { data: Blob | Uint8Array | string; filename: string; column?: string };

/**
 * Client of the email verification API. Every endpoint, typed from the service's OpenAPI
 * document (`src/generated/email-api.ts`).
 */
export class EmailClient {
  readonly http: HttpCore;
  private readonly singleTimeoutMs: number;

  constructor(options: ClientOptions & { singleTimeoutMs?: number }) {
    this.http = new HttpCore(options);
    this.singleTimeoutMs = Math.max(MIN_SINGLE_TIMEOUT_MS, options.singleTimeoutMs ?? Math.max(options.timeoutMs ?? 0, 15_000));
  }

  /** `POST /api/v1/verify-single`: one address, one unit of quota. Waits at least 5 s. */
  verify(email: string, options: { useSmtp?: boolean; signal?: AbortSignal } = {}): Promise<SingleVerification> {
    return this.http.json('POST', '/api/v1/verify-single', { json: { email, use_smtp: options.useSmtp ?? false }, timeoutMs: this.singleTimeoutMs, signal: options.signal });
  }

  /** `POST /api/v1/verify-batch`: up to 10,000 addresses inline, charged atomically. */
  verifyBatch(emails: string[], options: { useSmtp?: boolean; idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<BatchVerification> {
    return this.http.json('POST', '/api/v1/verify-batch', {
      json: { emails, use_smtp: options.useSmtp ?? false },
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {},
      timeoutMs: Math.max(this.singleTimeoutMs, 120_000),
      signal: options.signal,
    });
  }

  /** `POST /api/validate-email`: the public, keyless route (rate-limited per address). */
  validatePublic(email: string, options: { useSmtp?: boolean } = {}): Promise<VerificationResult> {
    return this.http.json('POST', '/api/validate-email', { json: { email, use_smtp: options.useSmtp ?? false }, anonymous: true, timeoutMs: this.singleTimeoutMs });
  }

  /** `GET /api/v1/account`: plan, quota, rate limit and features. */
  account(): Promise<Account> {
    return this.http.json('GET', '/api/v1/account');
  }

  /** `POST /api/v1/jobs` with a JSON list. */
  createJob(emails: string[], options: { useSmtp?: boolean; dedupe?: boolean; idempotencyKey?: string } = {}): Promise<JobSubmitted> {
    return this.http.json('POST', '/api/v1/jobs', {
      json: { emails, use_smtp: options.useSmtp ?? false, dedupe: options.dedupe ?? false },
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {},
      timeoutMs: 120_000,
    });
  }

  /** `POST /api/v1/jobs` with an uploaded CSV or text file (multipart). */
  async uploadJob(file: JobFile, options: { useSmtp?: boolean; dedupe?: boolean; idempotencyKey?: string } = {}): Promise<JobSubmitted> {
    const form = new FormData();
    if ('path' in file) {
      const { blob, filename } = await fileBlob(file.path, /\.txt$/i.test(file.path) ? 'text/plain' : 'text/csv');
      form.append('file', blob, filename);
    } else {
      const type = /\.txt$/i.test(file.filename) ? 'text/plain' : 'text/csv';
      form.append('file', file.data instanceof Blob ? file.data : new Blob([file.data], { type }), file.filename);
    }
    if (file.column) form.append('column', file.column);
    if (options.useSmtp !== undefined) form.append('use_smtp', String(options.useSmtp));
    if (options.dedupe !== undefined) form.append('dedupe', String(options.dedupe));
    return this.http.json('POST', '/api/v1/jobs', { form, headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}, timeoutMs: 120_000 });
  }

  /** `GET /api/v1/jobs`: the 50 most recent jobs, counters under both namings. */
  async listJobs(): Promise<Omit<JobList, 'jobs'> & { jobs: Array<JobList['jobs'][number] & JobCounters> }> {
    const list = await this.http.json<JobList>('GET', '/api/v1/jobs');
    return { ...list, jobs: list.jobs.map((j) => normalizeCounters(j)) };
  }

  /** `GET /api/v1/jobs/{job_id}`: status and counters (both namings). */
  async getJob(jobId: string): Promise<JobStatus> {
    return normalizeCounters(await this.http.json<Json<'/api/v1/jobs/{job_id}', 'get', 200>>('GET', `/api/v1/jobs/${encodeURIComponent(jobId)}`));
  }

  /** `DELETE /api/v1/jobs/{job_id}`: cancel, refunding the unprocessed remainder. */
  cancelJob(jobId: string): Promise<JobCancelled> {
    return this.http.json('DELETE', `/api/v1/jobs/${encodeURIComponent(jobId)}`);
  }

  /**
   * Polls a job until it is completed, failed or cancelled (`onProgress` on each reading).
   * Throws an Error when `timeoutMs` passes first (the job goes on).
   */
  async waitForJob(jobId: string, options: { intervalMs?: number; timeoutMs?: number; onProgress?: (job: JobStatus) => void; signal?: AbortSignal } = {}): Promise<JobStatus> {
    const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
    let interval = options.intervalMs ?? 1000;
    for (;;) {
      const job = await this.getJob(jobId);
      options.onProgress?.(job);
      if (FINAL.has(job.status)) return job;
      if (Date.now() + interval > deadline) throw new Error(`job ${jobId} is still ${job.status} (${job.progress_pct}%) after the wait`);
      await sleep(interval, undefined, { signal: options.signal });
      // Long jobs are polled less often, up to every 10 s.
      interval = Math.min(10_000, Math.round(interval * 1.25));
    }
  }

  /** `GET /api/v1/jobs/{job_id}/results`: one JSON page (of the rows `status` keeps, if given). */
  results(jobId: string, options: { page?: number; perPage?: number } & ResultsFilter = {}): Promise<ResultsPage> {
    return this.http.json('GET', `/api/v1/jobs/${encodeURIComponent(jobId)}/results`, { query: { page: options.page, per_page: options.perPage, ...filterQuery(options) } });
  }

  /** Every result of a completed job (that the filter keeps), in input order, page by page. */
  async *iterateResults(jobId: string, perPage = 5000, filter: ResultsFilter = {}): AsyncGenerator<JobResult> {
    for (let page = 1; ; page++) {
      const answer = await this.results(jobId, { page, perPage, ...filter });
      yield* answer.results;
      if (answer.results.length < perPage || page * perPage >= (answer.matched ?? answer.total)) return;
    }
  }

  /**
   * The results as CSV (RFC 4180), streamed to `path`: for a job uploaded as a CSV file,
   * that file with the result columns appended. Returns what was written.
   */
  async downloadResultsCsv(jobId: string, path: string, onProgress?: (bytes: number) => void, filter: ResultsFilter = {}): Promise<SavedFile> {
    const { response } = await this.http.raw('GET', `/api/v1/jobs/${encodeURIComponent(jobId)}/results`, { query: { format: 'csv', ...filterQuery(filter) }, timeoutMs: 600_000 });
    return saveBody(response, path, undefined, onProgress);
  }

  /** The results as CSV rows (the header row first), streamed without holding the file. */
  async *resultsCsvRows(jobId: string, filter: ResultsFilter = {}): AsyncGenerator<string[]> {
    const { response } = await this.http.raw('GET', `/api/v1/jobs/${encodeURIComponent(jobId)}/results`, { query: { format: 'csv', ...filterQuery(filter) }, timeoutMs: 600_000 });
    if (!response.body) return;
    yield* csvRows(response.body);
  }

  /** `DELETE /api/v1/jobs/{job_id}/results` (extension): deletes a finished job's addresses and results; its status and counts stay. */
  deleteJobResults(jobId: string): Promise<JobResultsDeleted> {
    return this.http.json('DELETE', `/api/v1/jobs/${encodeURIComponent(jobId)}/results`);
  }

  /** API keys of the account (`/api/dashboard/api-keys`). */
  readonly apiKeys = {
    list: (): Promise<ApiKeyList> => this.http.json('GET', '/api/dashboard/api-keys'),
    create: (name: string): Promise<ApiKeyCreated> => this.http.json('POST', '/api/dashboard/api-keys', { json: { name } }),
    revoke: (id: string): Promise<Json<'/api/dashboard/api-keys', 'delete', 200>> => this.http.json('DELETE', '/api/dashboard/api-keys', { query: { id } }),
  };

  /** Webhook endpoints of the account (`/api/dashboard/webhooks`). */
  readonly webhooks = {
    list: (): Promise<WebhookList> => this.http.json('GET', '/api/dashboard/webhooks'),
    create: (body: WebhookCreate): Promise<WebhookCreated> => this.http.json('POST', '/api/dashboard/webhooks', { json: body }),
    remove: (id: string): Promise<Json<'/api/dashboard/webhooks', 'delete', 200>> => this.http.json('DELETE', '/api/dashboard/webhooks', { query: { id } }),
    deliveries: (id: string, query: { limit?: number } = {}): Promise<DeliveryLog> => this.http.json('GET', `/api/dashboard/webhooks/${encodeURIComponent(id)}/deliveries`, { query }),
    redeliver: (id: string, deliveryId: string): Promise<Redelivery> =>
      this.http.json('POST', `/api/dashboard/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`),
  };
}
