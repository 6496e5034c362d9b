import type { CoreTables } from '@mailconv/platform';

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

/**
 * The outbox: events written in the transaction of the state change that causes them,
 * with one `webhook_deliveries` row per matching active endpoint.
 */
export interface EventsTable {
  id: string;
  account_id: string;
  type: string;
  /** The exact JSON body that will be delivered (bytes stay identical across retries). */
  payload: string;
  created_at: string;
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
   * JSON array of `[email, status, reason, score, suggestion]`, in input order: final once
   * done; while greylisted addresses wait for a retry, the results so far.
   */
  results: string | null;
}

/** A webhook endpoint of an account. `secret` signs deliveries, so it is kept (shown to the owner once). */
export interface WebhooksTable {
  id: string;
  account_id: string;
  url: string;
  /** Comma-separated event names. */
  events: string;
  secret: string;
  /** 1 active; 0 once deleted (kept for the delivery log). */
  active: number;
  created_at: string;
  last_triggered: string | null;
  deleted_at: string | null;
}

/**
 * Where a delivery is: due at `next_attempt_at` (also the lease expiry while an attempt
 * runs), delivered, dead-lettered after the retry schedule, or dropped because its
 * endpoint was deleted.
 */
export type DeliveryState = 'pending' | 'delivered' | 'dead' | 'cancelled';

/** One event for one endpoint: its id is the `X-Service-Delivery` header, the same on every attempt. */
export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  webhook_id: string;
  account_id: string;
  /** The event name (copied from the event for the log). */
  event: string;
  state: DeliveryState;
  /** Attempts made, ever (numbering of `webhook_attempts`). */
  attempts: number;
  /** Failed attempts since the last success or redelivery: the position in the retry schedule. */
  failures: number;
  /** When the next attempt is due; while an attempt runs, when its lease runs out. Null once final. */
  next_attempt_at: string | null;
  /** The claim of the attempt in flight: only its holder may record the outcome. */
  lease_token: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  /** When it was delivered, dead-lettered or dropped. */
  finished_at: string | null;
}

/** One delivery attempt, for the delivery log. */
export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  started_at: string;
  status_code: number | null;
  duration_ms: number;
  /** `http_500`, `timeout`, `connection_refused`, `private_address`, …; null on success. */
  error: string | null;
  /** When the next attempt was scheduled after this one; null when final. */
  next_retry_at: string | null;
}

/** Tables of the email service's own database. */
/** Addresses verified per account and UTC day (`YYYY-MM-DD`): the dashboard's daily chart, not billing. */
export interface VerificationDaysTable {
  account_id: string;
  day: string;
  verifications: number;
}

export interface EmailTables extends CoreTables {
  verification_days: VerificationDaysTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  jobs: JobsTable;
  job_chunks: JobChunksTable;
}
