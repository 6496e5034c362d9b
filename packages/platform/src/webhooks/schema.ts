import type { Generated } from 'kysely';

/** Which kind of webhook row: an account's endpoint, or its per-request signing identity. */
export type WebhookScope = 'endpoint' | 'request';

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
  /**
   * `endpoint`: one of the account's endpoints (listed, at most 10). `request`: the account's
   * one signing identity for per-request `webhook_url`s (never listed; its `url` is unused,
   * each delivery carries its own `target_url`).
   */
  scope: Generated<WebhookScope>;
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
  /** Where this delivery goes when it is not the endpoint's own URL (a per-request `webhook_url`). */
  target_url: Generated<string | null>;
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

/** The webhook tables a service's database has (the outbox and its deliveries), whichever service it is. */
export interface WebhookTables {
  events: EventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
