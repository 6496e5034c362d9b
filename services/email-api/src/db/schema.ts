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
 * Events waiting for webhook delivery (the outbox): written when the state change that
 * causes them happens; the webhook issue's delivery worker sends them.
 */
export interface EventsTable {
  id: string;
  account_id: string;
  type: string;
  /** The exact JSON body that will be delivered (bytes stay identical across retries). */
  payload: string;
  created_at: string;
}

/** Tables of the email service's own database. */
export interface EmailTables extends CoreTables {
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
}
