import type { CoreTables, WebhookTables } from '@mailconv/platform';
import type { Generated } from 'kysely';

/** A stored answer to a request sent with an `Idempotency-Key` (decision 19). */
export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  /** Route plus SHA-256 of the request body: the same key with another request is refused. */
  request_hash: string;
  /** `pending` while the first request runs, then `done`. */
  state: string;
  status_code: number | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
}

/** The five job states of the contract. */
export type JobState = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

/**
 * A job's stored state: the contract's five, or `storing` while a submit writes its chunks
 * (short transactions, so that request-path writes are not held up behind one long one;
 * issue 15). A `storing` job is invisible to the API, never claimed, and becomes `queued`
 * in the transaction that reserves its quota.
 */
export type StoredJobState = JobState | 'storing';

/** A bulk verification job (`POST /api/v1/jobs`); its addresses live in `job_chunks`. */
export interface JobsTable {
  id: string;
  account_id: string;
  status: StoredJobState;
  /** Addresses billed (after dedupe). */
  total: number;
  /** Addresses whose results are stored; only ever advanced together with a chunk's results. */
  processed: number;
  valid_count: number;
  invalid_count: number;
  risky_count: number;
  unknown_count: number;
  /** 0/1: portable booleans. */
  use_smtp: number;
  catch_all: number;
  /** Addresses per chunk when the job was stored (a later setting change does not move rows). */
  chunk_size: number;
  chunk_count: number;
  /** The quota reservation paying for the job; refunds go through it. */
  reservation_id: string;
  /** Short reason of a `failed` job. */
  error: string | null;
  created_at: string;
  started_at: string | null;
  /** When the job reached a final state (completed, failed or cancelled). */
  completed_at: string | null;
  /**
   * A CSV upload's own columns (issue 23): the header record as the download writes it
   * (the file's header text byte for byte, or `column_1,…` when it had none, padded to
   * `input_width` with generated names); null for text uploads and JSON submissions.
   */
  input_header: string | null;
  /** Cells per input row (every stored row is padded to it); 0 without input columns. */
  input_width: Generated<number>;
  /** When the addresses and results were deleted (`DELETE …/results` or retention); counts and status stay. */
  results_deleted_at: string | null;
}

/** Where a chunk is: waiting, held by a worker until `lease_until`, or finished. */
export type ChunkState = 'pending' | 'leased' | 'done';

/** A slice of a job's addresses, the unit workers claim, verify and store at once. */
export interface JobChunksTable {
  job_id: string;
  idx: number;
  size: number;
  /** JSON array of the chunk's addresses, in input order. */
  emails: string;
  state: ChunkState;
  /** Greylisting retries made so far (decision: greylisted addresses are retried a few minutes apart, bounded). */
  attempts: number;
  /** Identifies the claim: only the holder of the current lease may store results. */
  lease_token: string | null;
  lease_until: string | null;
  /**
   * JSON array of `StoredResult` tuples (`[email, status, reason, score, suggestion, …sub-checks]`), in input order: final once
   * done; while greylisted addresses wait for a retry, the results so far.
   */
  results: string | null;
  /** JSON array of the CSV upload's raw record texts, parallel to `emails`; null without input columns. */
  input_rows: string | null;
}


/** Tables of the email service's own database. */
/** Addresses verified per account and UTC day (`YYYY-MM-DD`): the dashboard's daily chart, not billing. */
export interface VerificationDaysTable {
  account_id: string;
  day: string;
  verifications: number;
}

/**
 * SMTP outcomes kept for reuse (decision 28): `key` hashes the account, the address, the
 * catch-all choice and the prober's rules version, so the table holds no address; `outcome`
 * is the engine's JSON without the reply text.
 */
export interface SmtpOutcomesTable {
  key: string;
  outcome: string;
  expires_at: string;
}

export interface EmailTables extends CoreTables, WebhookTables {
  smtp_outcomes: SmtpOutcomesTable;
  verification_days: VerificationDaysTable;
  idempotency_keys: IdempotencyKeysTable;
  jobs: JobsTable;
  job_chunks: JobChunksTable;
}
