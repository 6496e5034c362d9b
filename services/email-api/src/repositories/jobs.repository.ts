import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { Database } from '@mailconv/platform';
import type { EmailTables, JobsTable, JobState, StoredJobState } from '../db/schema.js';

/** The chunk row as long as the caller still holds its lease (same job, index and lease token). */
function heldLease(chunk: { jobId: string; idx: number; token: string }) {
  return (eb: ExpressionBuilder<EmailTables, 'job_chunks'>) =>
    eb.and([eb('job_id', '=', chunk.jobId), eb('idx', '=', chunk.idx), eb('state', '=', 'leased'), eb('lease_token', '=', chunk.token)]);
}

/** A job row as the API sees it (never `storing`: those are filtered out). */
export type JobRow = Omit<Selectable<JobsTable>, 'status'> & { status: JobState };

/** A chunk a worker holds a lease on. */
export interface ClaimedChunk {
  jobId: string;
  accountId: string;
  idx: number;
  size: number;
  /** The chunk's addresses as stored (JSON text); the worker parses and checks it. */
  emails: string;
  /** Results of an earlier attempt whose greylisted addresses are to be retried; null on a first attempt. */
  results: string | null;
  attempts: number;
  useSmtp: boolean;
  catchAll: boolean;
  token: string;
  /** The chunk was leased by a worker whose lease had run out (it died or stalled): a lease expiry. */
  tookOver: boolean;
}

/** Per-verdict counts of one chunk. */
export interface VerdictCounts {
  valid: number;
  invalid: number;
  risky: number;
  unknown: number;
}

type Exec = Kysely<EmailTables>;

/** States in which a job still has work to do (and may be cancelled). */
export const ACTIVE_STATES: readonly StoredJobState[] = ['queued', 'processing'];

/**
 * Rows per INSERT of chunks, each in its own transaction: a chunk holds about 30 KB of
 * text, so a statement stays near 1.5 MB and a write transaction of the submit a few ms,
 * however long the list (issue 15: a request never waits for the whole list's writes).
 */
export const CHUNK_INSERT_BATCH = 50;

/** A job being stored, as `stage` takes it. */
export type NewJob = Omit<JobRow, 'status' | 'processed' | 'valid_count' | 'invalid_count' | 'risky_count' | 'unknown_count' | 'error' | 'started_at' | 'completed_at' | 'reservation_id' | 'results_deleted_at'>;

/** Final states: a job in one of them may have its data deleted. */
const FINAL: readonly StoredJobState[] = ['completed', 'failed', 'cancelled'];

/**
 * Jobs and their chunks. Every method that changes state is one conditional statement (or
 * runs in the caller's transaction), so concurrent workers, a cancel and a restart after a
 * crash can interleave in any order without a chunk counted twice.
 */
export class JobsRepository {
  constructor(private readonly database: Database<EmailTables>) {}

  /**
   * Writes a job as `storing` and its chunks, `CHUNK_INSERT_BATCH` chunks per transaction
   * with a turn of the event loop between them, so that other writers (the request path)
   * get the database in between. `chunks` are the chunks' address lists as JSON text, each
   * `job.chunk_size` long but the last; `inputRows`, a CSV upload's raw records (JSON text
   * per chunk, parallel to `chunks`). Then `publish` it, or `discard` it.
   */
  async stage(job: NewJob, chunks: readonly string[], inputRows?: readonly string[]): Promise<void> {
    await this.database.db
      .insertInto('jobs')
      .values({ ...job, status: 'storing', reservation_id: '', processed: 0, valid_count: 0, invalid_count: 0, risky_count: 0, unknown_count: 0, error: null, started_at: null, completed_at: null, results_deleted_at: null })
      .execute();
    for (let start = 0; start < chunks.length; start += CHUNK_INSERT_BATCH) {
      const rows = chunks.slice(start, start + CHUNK_INSERT_BATCH).map((emails, i) => ({
        job_id: job.id,
        idx: start + i,
        size: start + i === chunks.length - 1 ? job.total - job.chunk_size * (chunks.length - 1) : job.chunk_size,
        emails,
        state: 'pending' as const,
        attempts: 0,
        lease_token: null,
        lease_until: null,
        results: null,
        input_rows: inputRows?.[start + i] ?? null,
      }));
      await this.database.writeTransaction((trx) => trx.insertInto('job_chunks').values(rows).execute());
      // Between batches the event loop (and so the database) serves others.
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Makes a staged job `queued` with the reservation paying for it (in that reservation's transaction); false if it is not staged. */
  async publish(trx: Exec, id: string, reservationId: string): Promise<boolean> {
    const r = await trx.updateTable('jobs').set({ status: 'queued', reservation_id: reservationId }).where('id', '=', id).where('status', '=', 'storing').executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** Deletes a staged job and its chunks, in batches like `stage` wrote them. */
  async discard(id: string): Promise<void> {
    const db = this.database.db;
    const staged = await db.selectFrom('jobs').select('chunk_count').where('id', '=', id).where('status', '=', 'storing').executeTakeFirst();
    if (!staged) return;
    await this.deleteChunks(id);
    await db.deleteFrom('jobs').where('id', '=', id).where('status', '=', 'storing').execute();
  }

  /**
   * Deletes a job's chunks, `CHUNK_INSERT_BATCH` per statement from the end with a turn of
   * the event loop between them (a million addresses are about 100 MB of text: one DELETE
   * would hold every other write of the process). Chunks already gone are fine.
   */
  async deleteChunks(id: string): Promise<void> {
    const db = this.database.db;
    const last = await db.selectFrom('job_chunks').select((eb) => eb.fn.max('idx').as('idx')).where('job_id', '=', id).executeTakeFirst();
    if (last?.idx === null || last?.idx === undefined) return;
    for (let start = Number(last.idx) - CHUNK_INSERT_BATCH + 1; start > -CHUNK_INSERT_BATCH; start -= CHUNK_INSERT_BATCH) {
      await db.deleteFrom('job_chunks').where('job_id', '=', id).where('idx', '>=', Math.max(0, start)).execute();
      await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * Marks a finished job's results deleted (once: a repeat keeps the first time); the job
   * as it is then, or undefined when it is not finished (or not `accountId`'s).
   */
  async markResultsDeleted(id: string, now: Date, accountId?: string): Promise<JobRow | undefined> {
    let q = this.database.db
      .updateTable('jobs')
      .set((eb) => ({ results_deleted_at: eb.fn.coalesce('results_deleted_at', eb.val(now.toISOString())) }))
      .where('id', '=', id)
      .where('status', 'in', FINAL);
    if (accountId !== undefined) q = q.where('account_id', '=', accountId);
    return (await q.returningAll().executeTakeFirst()) as JobRow | undefined;
  }

  /**
   * Up to `limit` finished jobs that still have chunks and whose data is due for deletion:
   * finished before `before` (null: retention off), or already marked deleted (a deletion
   * a dead process left part-way).
   */
  async expiredResults(before: Date | null, limit: number): Promise<string[]> {
    const rows = await this.database.db
      .selectFrom('jobs')
      .select('id')
      .where('status', 'in', FINAL)
      .where((eb) => eb.or([eb('results_deleted_at', 'is not', null), ...(before ? [eb('completed_at', '<', before.toISOString())] : [])]))
      .where(({ exists, selectFrom }) => exists(selectFrom('job_chunks as c').select('c.idx').whereRef('c.job_id', '=', 'jobs.id')))
      .orderBy('completed_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Ids of jobs left `storing` since before `before` (their submit's process died part-way). */
  async abandoned(before: Date): Promise<string[]> {
    const rows = await this.database.db.selectFrom('jobs').select('id').where('status', '=', 'storing').where('created_at', '<', before.toISOString()).limit(100).execute();
    return rows.map((r) => r.id);
  }

  /** The job `id` if `accountId` owns it. */
  async find(accountId: string, id: string, exec: Exec = this.database.db): Promise<JobRow | undefined> {
    return (await exec.selectFrom('jobs').selectAll().where('id', '=', id).where('account_id', '=', accountId).where('status', '!=', 'storing').executeTakeFirst()) as JobRow | undefined;
  }

  /** The account's most recent jobs, newest first. */
  async list(accountId: string, limit: number): Promise<JobRow[]> {
    return (await this.database.db.selectFrom('jobs').selectAll().where('account_id', '=', accountId).where('status', '!=', 'storing').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()) as JobRow[];
  }

  /** Current status of a job (workers poll it to notice a cancel made by another process). */
  async status(id: string): Promise<StoredJobState | undefined> {
    return (await this.database.db.selectFrom('jobs').select('status').where('id', '=', id).executeTakeFirst())?.status;
  }

  /**
   * Leases the oldest claimable chunk of an active job (or the `target` chunk, named by a
   * queue message, if it is claimable): pending, or leased by a worker whose lease expired
   * (it crashed or was killed). The claim is a conditional UPDATE, so of two workers that
   * picked the same chunk only one gets it; the other looks again.
   */
  async claim(token: string, now: Date, leaseMs: number, target?: { jobId: string; idx: number }): Promise<ClaimedChunk | null> {
    const db = this.database.db;
    const nowIso = now.toISOString();
    for (let attempt = 0; attempt < (target ? 1 : 5); attempt++) {
      const candidate = target
        ? { job_id: target.jobId, idx: target.idx }
        : await db
        .selectFrom('job_chunks as c')
        .innerJoin('jobs as j', 'j.id', 'c.job_id')
        .select(['c.job_id', 'c.idx'])
        .where('j.status', 'in', ACTIVE_STATES)
        .where((eb) => eb.or([eb('c.state', '=', 'pending'), eb.and([eb('c.state', '=', 'leased'), eb('c.lease_until', '<', nowIso)])]))
        .orderBy('j.created_at')
        .orderBy('c.job_id')
        .orderBy('c.idx')
        .limit(1)
        .executeTakeFirst();
      if (!candidate) return null;
      const claimed = await this.database.writeTransaction(async (trx) => {
        // Pending first; then a chunk given up until a greylisting retry (no lease token);
        // then a worker's lease that ran out, taken over (told apart for the metrics).
        const lease = (from: 'pending' | 'deferred' | 'expired') =>
          trx
            .updateTable('job_chunks')
            .set({ state: 'leased', lease_token: token, lease_until: new Date(now.getTime() + leaseMs).toISOString() })
            .where('job_id', '=', candidate.job_id)
            .where('idx', '=', candidate.idx)
            .where((eb) =>
              from === 'pending'
                ? eb('state', '=', 'pending')
                : eb.and([eb('state', '=', 'leased'), eb('lease_until', '<', nowIso), from === 'deferred' ? eb('lease_token', 'is', null) : eb('lease_token', 'is not', null)]),
            )
            .returning(['job_id', 'idx', 'size', 'emails', 'results', 'attempts'])
            .executeTakeFirst();
        let tookOver = false;
        let chunk = (await lease('pending')) ?? (await lease('deferred'));
        if (!chunk) {
          chunk = await lease('expired');
          tookOver = chunk !== undefined;
        }
        if (!chunk) return null;
        const job = await trx
          .updateTable('jobs')
          .set((eb) => ({ status: 'processing', started_at: eb.fn.coalesce('started_at', eb.val(nowIso)) }))
          .where('id', '=', chunk.job_id)
          .where('status', 'in', ACTIVE_STATES)
          .returning(['account_id', 'use_smtp', 'catch_all'])
          .executeTakeFirst();
        if (!job) return null;
        return { jobId: chunk.job_id, accountId: job.account_id, idx: chunk.idx, size: chunk.size, emails: chunk.emails, results: chunk.results, attempts: chunk.attempts, useSmtp: job.use_smtp === 1, catchAll: job.catch_all === 1, token, tookOver };
      });
      if (claimed) return claimed;
    }
    return null;
  }

  /** Extends a lease the caller still holds; false when it was lost (expired and taken over). */
  async renew(chunk: ClaimedChunk, until: Date): Promise<boolean> {
    const r = await this.database.db
      .updateTable('job_chunks')
      .set({ lease_until: until.toISOString() })
      .where(heldLease(chunk))
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** Hands a chunk back unfinished (graceful shutdown), so the next worker need not wait for the lease to expire. */
  async release(chunk: ClaimedChunk): Promise<void> {
    await this.database.db
      .updateTable('job_chunks')
      .set({ state: 'pending', lease_token: null, lease_until: null })
      .where(heldLease(chunk))
      .execute();
  }

  /**
   * Keeps the results so far and gives the chunk up until `retryAt`, when any worker may
   * claim it again (like an expired lease) to retry its greylisted addresses.
   */
  async defer(chunk: ClaimedChunk, results: string, retryAt: Date): Promise<boolean> {
    const r = await this.database.db
      .updateTable('job_chunks')
      .set((eb) => ({ results, attempts: eb('attempts', '+', 1), lease_token: null, lease_until: retryAt.toISOString() }))
      .where(heldLease(chunk))
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /**
   * Marks the chunk done with its results, if the caller still holds its lease. False when
   * the lease was lost: then nothing may be counted.
   */
  async storeChunk(trx: Exec, chunk: ClaimedChunk, results: string): Promise<boolean> {
    const r = await trx
      .updateTable('job_chunks')
      .set({ state: 'done', results, lease_token: null, lease_until: null })
      .where(heldLease(chunk))
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** Adds a stored chunk to the job's counters if the job is still running; the job after the change. */
  async advance(trx: Exec, jobId: string, units: number, counts: VerdictCounts): Promise<JobRow | undefined> {
    return trx
      .updateTable('jobs')
      .set((eb) => ({
        processed: eb('processed', '+', units),
        valid_count: eb('valid_count', '+', counts.valid),
        invalid_count: eb('invalid_count', '+', counts.invalid),
        risky_count: eb('risky_count', '+', counts.risky),
        unknown_count: eb('unknown_count', '+', counts.unknown),
      }))
      .where('id', '=', jobId)
      .where('status', '=', 'processing')
      .returningAll()
      .executeTakeFirst() as Promise<JobRow | undefined>;
  }

  /**
   * Moves an active job to a final state; the job as it was at that moment, or undefined
   * when it was not active (already finished, or not the caller's).
   */
  async finish(trx: Exec, jobId: string, to: 'completed' | 'failed' | 'cancelled', now: Date, options: { accountId?: string; error?: string } = {}): Promise<JobRow | undefined> {
    let q = trx
      .updateTable('jobs')
      .set({ status: to, completed_at: now.toISOString(), ...(options.error !== undefined ? { error: options.error } : {}) })
      .where('id', '=', jobId)
      .where('status', 'in', to === 'completed' ? ['processing'] : ACTIVE_STATES);
    if (options.accountId !== undefined) q = q.where('account_id', '=', options.accountId);
    return q.returningAll().executeTakeFirst() as Promise<JobRow | undefined>;
  }

  /** Stored results of chunks `from`…`to` (inclusive), in order; with `withInput`, a CSV upload's raw records too. */
  async chunkResults(jobId: string, from: number, to: number, withInput = false): Promise<Array<{ idx: number; results: string | null; input_rows?: string | null }>> {
    return this.database.db
      .selectFrom('job_chunks')
      .select(withInput ? ['idx', 'results', 'input_rows'] : ['idx', 'results'])
      .where('job_id', '=', jobId)
      .where('idx', '>=', from)
      .where('idx', '<=', to)
      .orderBy('idx')
      .execute();
  }
}
