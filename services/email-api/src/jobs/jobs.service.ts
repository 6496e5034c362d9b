import type { Kysely } from 'kysely';
import { AppError, newId, quotaPeriod, type CoreTables, type Database, type Principal, type QuotaLedger } from '@mailconv/platform';
import type { VerificationResult } from '@mailconv/verifier';
import type { ResultItem } from './results.js';
import { utcDay, type DailyUsageRepository } from '../usage/daily-usage.repository.js';
import type { EmailTables, JobState } from '../db/schema.js';
import type { EmailPlan } from '../plans.js';
import type { EventsRepository } from '@mailconv/platform';
import type { ClaimedChunk, JobRow, JobsRepository, VerdictCounts } from '../repositories/jobs.repository.js';
import type { VerificationService } from '../verification/verification.service.js';
import type { IdempotencyService, IdempotentOutcome } from '../idempotency/idempotency.service.js';
import { prepareList, submitHash, type InputRows, type PreparedList } from './job-list.js';
import { FINAL_STATES, csvRow, matches, neutraliseRecord, resultColumnNames, resultItem, type ResultsQuery, type StoredResult } from './results.js';

/** A job still `storing` after this long was abandoned by a dead process (a million addresses take seconds). */
export const STAGED_JOB_MAX_AGE_MS = 3_600_000;
/** Contract limit of `GET /api/v1/jobs`. */
export const JOB_LIST_LENGTH = 50;
export { CSV_HEADER } from './results.js';

/** The stored form of a verdict: the contract's columns, then the sub-checks (`columns=all`, issue 23). */
export const toStored = (r: VerificationResult): StoredResult => [
  r.email,
  r.status,
  r.reason,
  r.score,
  r.suggestion,
  r.normalized,
  r.checks.syntax,
  r.checks.dns,
  r.checks.mx.count,
  r.checks.mx.providers.length ? r.checks.mx.providers.join('|') : null,
  r.checks.smtp,
  r.checks.catch_all,
  r.checks.disposable,
  r.checks.role_based,
  r.checks.free_provider,
];
export type { StoredResult };

export interface JobSubmitAnswer {
  success: true;
  job_id: string;
  status: 'queued';
  submitted: number;
  duplicates_removed: number;
  total: number;
  status_url: string;
}

export interface JobView {
  success: true;
  job_id: string;
  status: JobState;
  total: number;
  processed: number;
  valid: number;
  invalid: number;
  risky: number;
  unknown: number;
  valid_count: number;
  invalid_count: number;
  risky_count: number;
  unknown_count: number;
  progress_pct: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  error: string | null;
  results_deleted_at: string | null;
}

export interface JobsServiceDeps {
  database: Database<EmailTables>;
  jobs: JobsRepository;
  quota: QuotaLedger;
  events: EventsRepository;
  verification: VerificationService;
  /** The `Idempotency-Key` flow of submissions. */
  idempotency: IdempotencyService;
  clock: () => Date;
  /** Addresses per stored chunk (the unit a worker claims). */
  chunkSize: number;
  /** Base of absolute URLs (`status_url`). */
  publicBaseUrl: string;
  /** Called after a job is stored, so that workers get its chunks at once (queue messages, or a wake-up). */
  onSubmitted?: (jobId: string, chunkCount: number) => Promise<void>;
  /** Called after a job is cancelled, so that a worker stops inside the chunk it holds. */
  onCancelled?: (jobId: string) => void;
  /** Verifications per day (the dashboard's chart), counted with each stored chunk. */
  usage?: DailyUsageRepository;
  /** Called after a job reached a final state in this process (metrics). */
  onFinished?: (status: 'completed' | 'failed' | 'cancelled') => void;
}

/**
 * The list of a submission: addresses as sent (prepared here), or already prepared by the
 * upload offloader with the request's fingerprint, or the offloader's finding that it is unusable.
 */
export type JobSource = { emails: readonly string[]; dedupe: boolean; input?: InputRows } | { list: PreparedList; fingerprint: string | null } | { problem: string };

/** Thrown inside a transaction to roll it back without it being an error. */
class Rollback extends Error {}

/** `queued`/`processing`: percent of addresses with stored results, rounded down (100 only when all are). */
export function progressPct(job: Pick<JobRow, 'processed' | 'total'>): number {
  return job.total === 0 ? 100 : Math.floor((job.processed * 100) / job.total);
}

/** The contract's JobStatus (both counter namings, decision 2) from a stored row. */
export function jobView(job: JobRow): JobView {
  return {
    success: true,
    job_id: job.id,
    status: job.status,
    total: job.total,
    processed: job.processed,
    valid: job.valid_count,
    invalid: job.invalid_count,
    risky: job.risky_count,
    unknown: job.unknown_count,
    valid_count: job.valid_count,
    invalid_count: job.invalid_count,
    risky_count: job.risky_count,
    unknown_count: job.unknown_count,
    progress_pct: progressPct(job),
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    error: job.error,
    results_deleted_at: job.results_deleted_at,
  };
}

/** Chunks read per query when a status filter makes the download or a page scan the job. */
const SCAN_CHUNKS = 8;

export { csvField } from './results.js';

/**
 * Bulk jobs: acceptance (quota reserved in the transaction that stores the job), the state
 * changes workers and callers make (each with its refund and its outbox event in the same
 * transaction), and reading results.
 */
export class JobsService {
  constructor(private readonly deps: JobsServiceDeps) {}

  /** Addresses per stored chunk. */
  get chunkSize(): number {
    return this.deps.chunkSize;
  }

  /** Makes `emails` a list to store; 400 naming `emails` when it cannot be a job. Large lists do this in a worker thread instead (same function). */
  prepare(emails: readonly string[], dedupe: boolean, input?: InputRows): PreparedList {
    const prepared = prepareList(emails, dedupe, this.deps.chunkSize, input);
    if ('problem' in prepared) throw new AppError('invalid_request', prepared.problem, { field: 'emails' });
    return prepared;
  }

  /** Stores a prepared list as a job, reserving quota for all of it in the same transaction. */
  /**
   * `POST /api/v1/jobs` as a whole: the list (inline, or already prepared by the upload
   * offloader with its request fingerprint) prepared and submitted once per
   * `Idempotency-Key`; a retry gets the first answer's bytes back.
   */
  async submitRequest(
    principal: Principal,
    plan: EmailPlan,
    input: { source: JobSource; useSmtp: boolean; idempotencyKey: string | undefined },
    serialize: (answer: JobSubmitAnswer) => string,
  ): Promise<IdempotentOutcome<JobSubmitAnswer>> {
    const { source, useSmtp } = input;
    // The plan's SMTP feature first: it answers before any problem of the list itself.
    this.deps.verification.checkSmtp(useSmtp, plan);
    if ('problem' in source) throw new AppError('invalid_request', source.problem, { field: 'emails' });
    const list = 'list' in source ? source.list : this.prepare(source.emails, source.dedupe, source.input);
    return this.deps.idempotency.run({
      accountId: principal.accountId,
      key: input.idempotencyKey,
      fingerprint: () => ('list' in source ? source.fingerprint! : submitHash(useSmtp, source.dedupe, source.emails, source.input)),
      statusCode: 202,
      work: () => this.submit(principal, plan, list, { useSmtp }),
      serialize,
    });
  }

  async submit(principal: Principal, plan: EmailPlan, list: PreparedList, options: { useSmtp: boolean }): Promise<JobSubmitAnswer> {
    this.deps.verification.checkSmtp(options.useSmtp, plan);
    const size = this.deps.chunkSize;
    const { chunks } = list;
    const now = this.deps.clock();
    const id = newId('job', now.getTime());
    const refusal = (remaining: number) =>
      new AppError(
        'insufficient_quota',
        `Not enough quota for this job: ${list.total} verifications needed, ${remaining} of ${plan.monthlyQuota} left this month (it resets on ${quotaPeriod(now).resetDate}). Nothing was stored or charged.`,
        { remaining, required: list.total },
      );
    // A list that cannot fit is refused before anything is written; the reservation below decides.
    const used = await this.deps.quota.used(principal.accountId, now);
    if (used + list.total > plan.monthlyQuota) throw refusal(Math.max(0, plan.monthlyQuota - used));
    // The chunks are written first, a few per transaction, under a job no one sees (issue 15:
    // one transaction for the whole list held every other write of the process up); the
    // quota is reserved and the job made visible together in one short transaction.
    const job = { id, account_id: principal.accountId, total: list.total, use_smtp: options.useSmtp ? 1 : 0, catch_all: options.useSmtp && plan.features.catch_all ? 1 : 0, chunk_size: size, chunk_count: chunks.length, created_at: now.toISOString(), input_header: list.input?.header ?? null, input_width: list.input?.width ?? 0 };
    try {
      await this.deps.jobs.stage(job, chunks, list.input?.chunks);
      await this.deps.database.writeTransaction(async (trx) => {
        const reserved = await this.deps.quota.reserve(principal.accountId, list.total, plan.monthlyQuota, now, trx as unknown as Kysely<CoreTables>);
        if (!reserved.ok) throw refusal(reserved.remaining);
        if (!(await this.deps.jobs.publish(trx, id, reserved.reservationId))) throw new Error(`job ${id} was not staged any more`);
      });
    } catch (err) {
      // Left behind if this fails too: idle workers delete abandoned `storing` jobs later.
      await this.deps.jobs.discard(id).catch(() => undefined);
      throw err;
    }
    await this.deps.onSubmitted?.(id, chunks.length);
    return {
      success: true,
      job_id: id,
      status: 'queued',
      submitted: list.submitted,
      duplicates_removed: list.submitted - list.total,
      total: list.total,
      status_url: `${this.deps.publicBaseUrl.replace(/\/+$/, '')}/api/v1/jobs/${id}`,
    };
  }

  /**
   * Deletes jobs left `storing` for more than `STAGED_JOB_MAX_AGE_MS` (the process writing
   * them died before their quota was reserved: nothing was charged, no one saw them).
   */
  async discardAbandoned(): Promise<number> {
    const ids = await this.deps.jobs.abandoned(new Date(this.deps.clock().getTime() - STAGED_JOB_MAX_AGE_MS));
    for (const id of ids) await this.deps.jobs.discard(id);
    return ids.length;
  }

  async list(principal: Principal): Promise<JobRow[]> {
    return this.deps.jobs.list(principal.accountId, JOB_LIST_LENGTH);
  }

  /** The caller's job; 404 when it does not exist or belongs to another account. */
  async get(principal: Principal, id: string): Promise<JobRow> {
    const job = await this.deps.jobs.find(principal.accountId, id);
    if (!job) throw new AppError('not_found', `No job ${id} in this account.`);
    return job;
  }

  /**
   * Cancels an active job and refunds exactly what was not processed, in one transaction:
   * a chunk finishing at the same moment either commits first (and is counted and charged)
   * or finds the job cancelled and stores nothing.
   */
  async cancel(principal: Principal, id: string): Promise<{ success: true; job_id: string; status: 'cancelled'; processed: number; refunded: number }> {
    const now = this.deps.clock();
    const done = await this.deps.database.writeTransaction(async (trx) => {
      const job = await this.deps.jobs.finish(trx, id, 'cancelled', now, { accountId: principal.accountId });
      if (!job) return null;
      const refunded = job.total - job.processed;
      if (refunded > 0) await this.refund(trx, job, refunded);
      return { processed: job.processed, refunded };
    });
    if (!done) {
      const job = await this.get(principal, id);
      throw new AppError('job_not_cancellable', `Job ${id} is already ${job.status}; only queued or processing jobs can be cancelled.`, { status: job.status });
    }
    this.deps.onCancelled?.(id);
    this.deps.onFinished?.('cancelled');
    return { success: true, job_id: id, status: 'cancelled', ...done };
  }

  /**
   * Marks a job `failed` (decision 17: its unprocessed remainder is refunded) and records
   * `job.failed` with a short error, all in one transaction. No-op on a finished job.
   */
  async fail(jobId: string, error: string): Promise<void> {
    const now = this.deps.clock();
    const recorded = await this.deps.database.writeTransaction(async (trx) => {
      const job = await this.deps.jobs.finish(trx, jobId, 'failed', now, { error });
      if (!job) return null;
      const remainder = job.total - job.processed;
      if (remainder > 0) await this.refund(trx, job, remainder);
      return this.deps.events.record(job.account_id, 'job.failed', { event: 'job.failed', job_id: job.id, error, summary: summaryOf(job), timestamp: now.toISOString() }, now, trx);
    });
    if (recorded) this.deps.onFinished?.('failed');
    if (recorded?.deliveries) this.deps.events.notify();
  }

  /**
   * Stores a verified chunk, advances `processed` and the counters, and completes the job
   * (recording `job.completed`) when it was the last — one transaction. Returns false when
   * nothing was stored: the lease was lost or the job is no longer running.
   */
  async storeChunk(chunk: ClaimedChunk, rows: readonly StoredResult[]): Promise<boolean> {
    const counts: VerdictCounts = { valid: 0, invalid: 0, risky: 0, unknown: 0 };
    for (const r of rows) counts[r[1]] += 1;
    const text = JSON.stringify(rows);
    const now = this.deps.clock();
    let deliveries = 0;
    let completed = false;
    try {
      const stored = await this.deps.database.writeTransaction(async (trx) => {
        if (!(await this.deps.jobs.storeChunk(trx, chunk, text))) return false;
        const job = await this.deps.jobs.advance(trx, chunk.jobId, rows.length, counts);
        // Cancelled (or failed) meanwhile: the chunk's work is dropped with its lease.
        if (!job) throw new Rollback();
        await this.deps.usage?.add(job.account_id, utcDay(now), rows.length, trx);
        if (job.processed === job.total) {
          const done = await this.deps.jobs.finish(trx, job.id, 'completed', now);
          completed = done !== undefined;
          if (done) ({ deliveries } = await this.deps.events.record(job.account_id, 'job.completed', { event: 'job.completed', job_id: job.id, summary: summaryOf(job), timestamp: now.toISOString() }, now, trx));
        }
        return true;
      });
      if (completed) this.deps.onFinished?.('completed');
      if (deliveries) this.deps.events.notify();
      return stored;
    } catch (err) {
      if (err instanceof Rollback) return false;
      throw err;
    }
  }

  /**
   * A page of results (JSON form), of every row or of the rows whose status `query` asks
   * for; 409 `job_not_completed` before completion, 410 `results_deleted` once deleted.
   * `matched` is how many rows the filter selects (from the job's counters).
   */
  async page(principal: Principal, id: string, page: number, perPage: number, query: ResultsQuery = { statuses: null, all: false }): Promise<{ job: JobRow; matched: number; results: ResultItem[] }> {
    const job = await this.completedJob(principal, id);
    const matched = query.statuses ? [...query.statuses].reduce((n, st) => n + job[`${st}_count`], 0) : job.total;
    const first = (page - 1) * perPage;
    if (first >= matched) return { job, matched, results: [] };
    const size = job.chunk_size;
    const results: ResultItem[] = [];
    if (!query.statuses) {
      const last = Math.min(job.total, first + perPage) - 1;
      const chunks = await this.deps.jobs.chunkResults(job.id, Math.floor(first / size), Math.floor(last / size));
      for (const c of chunks) {
        const rows = JSON.parse(c.results ?? '[]') as StoredResult[];
        const base = c.idx * size;
        const from = Math.max(first - base, 0);
        const to = Math.min(last - base, rows.length - 1);
        for (let i = from; i <= to; i++) results.push(resultItem(rows[i]!, query.all));
      }
      return { job, matched, results };
    }
    // Filtered: the rows before the page are counted, not kept (a few chunks in memory at a time).
    let skip = first;
    for (let from = 0; from < job.chunk_count && results.length < perPage; from += SCAN_CHUNKS) {
      for (const c of await this.deps.jobs.chunkResults(job.id, from, from + SCAN_CHUNKS - 1)) {
        for (const r of JSON.parse(c.results ?? '[]') as StoredResult[]) {
          if (!matches(r, query) || skip-- > 0) continue;
          results.push(resultItem(r, query.all));
          if (results.length === perPage) break;
        }
        if (results.length === perPage) break;
      }
    }
    return { job, matched, results };
  }

  /**
   * The job as RFC 4180 CSV (CRLF line ends), produced chunk by chunk: at most one chunk's
   * rows are in memory, and the caller pulls only as fast as the client reads. A CSV
   * upload's rows come first, as the file spelled them, then the result columns
   * (`resultColumnNames`: prefixed `result_` where they clash with an input column). Every
   * cell, the upload's own and its header included, is neutralised against formulas
   * (`neutraliseFormula`, issue 45) unless `query.keepFormulas`.
   */
  async csv(principal: Principal, id: string, query: ResultsQuery = { statuses: null, all: false }): Promise<AsyncGenerator<string>> {
    const job = await this.completedJob(principal, id);
    const jobs = this.deps.jobs;
    const header = job.input_width > 0 ? job.input_header : null;
    const withInput = header !== null;
    const names = resultColumnNames(query.all, header);
    const keep = query.keepFormulas === true;
    const own = (raw: string) => (keep ? raw : neutraliseRecord(raw));
    return (async function* () {
      yield `${header !== null ? `${own(header)},` : ''}${names.join(',')}\r\n`;
      for (let idx = 0; idx < job.chunk_count; idx++) {
        const [chunk] = await jobs.chunkResults(job.id, idx, idx, withInput);
        const rows = JSON.parse(chunk?.results ?? '[]') as StoredResult[];
        const inputs = withInput ? (JSON.parse(chunk?.input_rows ?? '[]') as string[]) : null;
        let out = '';
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!;
          if (!matches(r, query)) continue;
          out += `${inputs ? `${own(inputs[i] ?? ','.repeat(job.input_width - 1))},` : ''}${csvRow(r, query.all, keep)}\r\n`;
        }
        yield out;
      }
    })();
  }

  /**
   * `DELETE /api/v1/jobs/{id}/results` (extension): removes a finished job's addresses and
   * results, keeping its counters and status. Repeating it answers the same; an active job
   * is 409 `job_not_completed`.
   */
  async deleteResults(principal: Principal, id: string): Promise<{ success: true; job_id: string; status: JobState; results_deleted_at: string }> {
    const now = this.deps.clock();
    let job = await this.deps.jobs.markResultsDeleted(id, now, principal.accountId);
    if (!job) {
      job = await this.get(principal, id);
      if (!FINAL_STATES.includes(job.status)) {
        throw new AppError('job_not_completed', `Job ${id} is ${job.status}; its results can be deleted once it is completed, failed or cancelled (or cancel it first).`, { status: job.status, progress_pct: progressPct(job) });
      }
    }
    // Also after a repeat: a process that died part-way through the deletion left chunks behind.
    await this.deps.jobs.deleteChunks(id);
    return { success: true, job_id: id, status: job.status, results_deleted_at: job.results_deleted_at! };
  }

  /**
   * The retention sweep (`EMAIL_JOB_RETENTION_DAYS`): deletes the addresses and results of
   * jobs finished more than `retentionDays` ago, and finishes deletions a dead process left
   * part-way. Idempotent: processes sweeping at once delete nothing twice. Returns the jobs purged.
   */
  async sweepResults(retentionDays: number): Promise<number> {
    const now = this.deps.clock();
    const before = retentionDays > 0 ? new Date(now.getTime() - retentionDays * 86_400_000) : null;
    let purged = 0;
    for (;;) {
      const ids = await this.deps.jobs.expiredResults(before, 100);
      for (const id of ids) {
        await this.deps.jobs.markResultsDeleted(id, now);
        await this.deps.jobs.deleteChunks(id);
      }
      purged += ids.length;
      if (ids.length < 100) return purged;
    }
  }

  private async completedJob(principal: Principal, id: string): Promise<JobRow> {
    const job = await this.get(principal, id);
    if (job.status !== 'completed') {
      throw new AppError('job_not_completed', `Job ${id} is ${job.status}; results are available once it is completed.`, { status: job.status, progress_pct: progressPct(job) });
    }
    if (job.results_deleted_at !== null) throw new AppError('results_deleted', `The results of job ${id} were deleted at ${job.results_deleted_at}; its counts stay in the job's status.`);
    return job;
  }

  private async refund(trx: Kysely<EmailTables>, job: JobRow, units: number): Promise<void> {
    const r = await this.deps.quota.refund(job.reservation_id, units, trx as unknown as Kysely<CoreTables>);
    // The reservation bounds every refund; failing here would mean the counters are wrong.
    if (!r.ok) throw new Error(`refund of ${units} units on job ${job.id} refused: ${r.reason}`);
  }
}

function summaryOf(job: JobRow): { total: number; valid: number; invalid: number; risky: number } {
  return { total: job.total, valid: job.valid_count, invalid: job.invalid_count, risky: job.risky_count };
}
