import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import { newId } from '../ids.js';
import type { DeliveryState, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookTables } from './schema.js';

type Exec = Kysely<WebhookTables>;

/** What an attempt needs: the delivery, its endpoint and the stored body bytes. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  event: string;
  /** Attempt number of this attempt (1 for the first). */
  attempt: number;
  failures: number;
  token: string;
  url: string;
  secret: string;
  /** The endpoint is still active (a deleted one gets no more deliveries). */
  active: boolean;
  payload: string;
}

/** How an attempt ended, as the dispatcher decided it. */
export interface AttemptOutcome {
  startedAt: Date;
  status: number | null;
  durationMs: number;
  error: string | null;
  /** The state after this attempt, and when the next one is due (pending only). */
  state: DeliveryState;
  nextAttemptAt: Date | null;
}

/** A delivery with its attempts, as the delivery log shows it. */
export interface DeliveryLogEntry {
  delivery_id: string;
  event_id: string;
  event: string;
  /** The per-request `webhook_url` it went to; null for an endpoint's own deliveries. */
  target_url: string | null;
  state: DeliveryState;
  attempts: number;
  next_retry_at: string | null;
  created_at: string;
  finished_at: string | null;
  history: Array<{ attempt: number; started_at: string; status_code: number | null; duration_ms: number; error: string | null; next_retry_at: string | null }>;
}

/** Does a comma-separated `events` list subscribe to `type`? */
const subscribes = (events: string, type: string) => events.split(',').includes(type);

/**
 * Webhook deliveries (one per event and endpoint) and their attempts. A delivery is due
 * when `state = 'pending'` and `next_attempt_at <= now`; claiming it moves
 * `next_attempt_at` to the end of the attempt's lease, so a process that dies mid-attempt
 * leaves it due again later, and only the lease holder records the outcome.
 */
export class DeliveriesRepository {
  constructor(private readonly database: Database<WebhookTables>) {}

  /**
   * Creates the deliveries of a new event for the account's active endpoints subscribed to
   * it, and for `targetUrl` (a per-request `webhook_url`, signed by the account's request
   * identity) when given, due at `dueAt`; call in the event's transaction. Returns how many
   * were created.
   */
  async fanOut(trx: Exec, event: { id: string; accountId: string; type: string; targetUrl?: string | undefined }, now: Date, dueAt: Date): Promise<number> {
    const hooks = await trx.selectFrom('webhooks').select(['id', 'events', 'scope']).where('account_id', '=', event.accountId).where('active', '=', 1).execute();
    const targets = [
      ...hooks.filter((h) => h.scope === 'endpoint' && subscribes(h.events, event.type)).map((h) => ({ id: h.id, targetUrl: null })),
      ...(event.targetUrl ? hooks.filter((h) => h.scope === 'request').map((h) => ({ id: h.id, targetUrl: event.targetUrl ?? null })) : []),
    ];
    const rows = targets
      .map((h) => ({
        id: newId('dlv', now.getTime()),
        event_id: event.id,
        webhook_id: h.id,
        target_url: h.targetUrl,
        account_id: event.accountId,
        event: event.type,
        state: 'pending' as const,
        attempts: 0,
        failures: 0,
        next_attempt_at: dueAt.toISOString(),
        lease_token: null,
        last_status: null,
        last_error: null,
        created_at: now.toISOString(),
        finished_at: null,
      }));
    if (rows.length) await trx.insertInto('webhook_deliveries').values(rows).execute();
    return rows.length;
  }

  /** Makes an event's pending deliveries due now (a `batch.completed` once its answer is sent). */
  async releaseEvent(eventId: string, now: Date): Promise<void> {
    await this.database.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: now.toISOString() })
      .where('event_id', '=', eventId)
      .where('state', '=', 'pending')
      .where('attempts', '=', 0)
      .where('lease_token', 'is', null)
      .execute();
  }

  /** Due deliveries, oldest due first, skipping the given endpoints (busy in this process). */
  async due(now: Date, excludeWebhooks: readonly string[], limit: number): Promise<Array<{ id: string; webhookId: string }>> {
    let q = this.database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'webhook_id'])
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now.toISOString())
      .orderBy('next_attempt_at')
      .limit(limit);
    if (excludeWebhooks.length) q = q.where('webhook_id', 'not in', excludeWebhooks);
    return (await q.execute()).map((r) => ({ id: r.id, webhookId: r.webhook_id }));
  }

  /**
   * Claims one due delivery until `leaseUntil` and loads what the attempt needs; null when
   * another process claimed it first. One conditional UPDATE: two claimers cannot both win.
   */
  async claim(id: string, now: Date, leaseUntil: Date, token: string): Promise<ClaimedDelivery | null> {
    const res = await this.database.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ next_attempt_at: leaseUntil.toISOString(), lease_token: token, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now.toISOString())
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    const row = await this.database.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select(['d.id', 'd.webhook_id', 'd.target_url', 'd.event', 'd.attempts', 'd.failures', 'w.url', 'w.secret', 'w.active', 'e.payload'])
      .where('d.id', '=', id)
      .where('d.lease_token', '=', token)
      .executeTakeFirst();
    if (!row) return null;
    return { id: row.id, webhookId: row.webhook_id, event: row.event, attempt: row.attempts, failures: row.failures, token, url: row.target_url ?? row.url, secret: row.secret, active: row.active === 1, payload: row.payload };
  }

  /**
   * Records an attempt and the delivery's new state, and stamps the endpoint's
   * `last_triggered`, in one transaction, if the lease is still held; false otherwise
   * (the lease ran out and another process took the delivery over).
   */
  async recordAttempt(claimed: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<boolean> {
    return this.database.writeTransaction(async (trx) => {
      const finished = outcome.state !== 'pending';
      const res = await trx
        .updateTable('webhook_deliveries')
        .set({
          state: outcome.state,
          failures: outcome.error === null ? 0 : claimed.failures + 1,
          next_attempt_at: outcome.nextAttemptAt?.toISOString() ?? null,
          lease_token: null,
          last_status: outcome.status,
          last_error: outcome.error,
          finished_at: finished ? now.toISOString() : null,
        })
        .where('id', '=', claimed.id)
        .where('lease_token', '=', claimed.token)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: claimed.id,
          attempt: claimed.attempt,
          started_at: outcome.startedAt.toISOString(),
          status_code: outcome.status,
          duration_ms: outcome.durationMs,
          error: outcome.error,
          next_retry_at: outcome.nextAttemptAt?.toISOString() ?? null,
        })
        .execute();
      if (outcome.status !== null || outcome.error !== 'webhook_deleted') {
        await trx.updateTable('webhooks').set({ last_triggered: outcome.startedAt.toISOString() }).where('id', '=', claimed.webhookId).execute();
      }
      return true;
    });
  }

  /** The endpoint's most recent deliveries (newest first) with every attempt; null when the account has no such endpoint. */
  async log(accountId: string, webhookId: string, limit: number): Promise<DeliveryLogEntry[] | null> {
    const hook = await this.database.db.selectFrom('webhooks').select('id').where('id', '=', webhookId).where('account_id', '=', accountId).executeTakeFirst();
    if (!hook) return null;
    const deliveries = await this.database.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    const attempts: Array<Selectable<WebhookAttemptsTable>> = deliveries.length
      ? await this.database.db
          .selectFrom('webhook_attempts')
          .selectAll()
          .where(
            'delivery_id',
            'in',
            deliveries.map((d) => d.id),
          )
          .orderBy('delivery_id')
          .orderBy('attempt')
          .execute()
      : [];
    return deliveries.map((d: Selectable<WebhookDeliveriesTable>) => ({
      delivery_id: d.id,
      event_id: d.event_id,
      event: d.event,
      target_url: d.target_url,
      state: d.state,
      attempts: d.attempts,
      // While an attempt runs, next_attempt_at is its lease, not a retry.
      next_retry_at: d.state === 'pending' && d.lease_token === null ? d.next_attempt_at : null,
      created_at: d.created_at,
      finished_at: d.finished_at,
      history: attempts
        .filter((a) => a.delivery_id === d.id)
        .map((a) => ({ attempt: a.attempt, started_at: a.started_at, status_code: a.status_code, duration_ms: a.duration_ms, error: a.error, next_retry_at: a.next_retry_at })),
    }));
  }

  /**
   * Puts a dead-lettered delivery back in the queue, due now, with a fresh retry schedule
   * and the same delivery id. 'not_found' when the account has no such delivery on that
   * endpoint; 'not_dead' when it is not dead-lettered.
   */
  async redeliver(accountId: string, webhookId: string, deliveryId: string, now: Date): Promise<'ok' | 'not_found' | 'not_dead' | 'webhook_inactive'> {
    return this.database.writeTransaction(async (trx) => {
      const row = await trx
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .select(['d.state', 'w.active'])
        .where('d.id', '=', deliveryId)
        .where('d.webhook_id', '=', webhookId)
        .where('d.account_id', '=', accountId)
        .executeTakeFirst();
      if (!row) return 'not_found';
      if (row.state !== 'dead') return 'not_dead';
      if (row.active !== 1) return 'webhook_inactive';
      await trx
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', failures: 0, next_attempt_at: now.toISOString(), lease_token: null, finished_at: null })
        .where('id', '=', deliveryId)
        .where('state', '=', 'dead')
        .execute();
      return 'ok';
    });
  }

  /**
   * The log's retention: deletes deliveries finished before `before` (their attempts go
   * with them), then events older than that with no delivery left. Returns both counts.
   */
  async prune(before: Date): Promise<{ deliveries: number; events: number }> {
    const cutoff = before.toISOString();
    const deliveries = await this.database.db.deleteFrom('webhook_deliveries').where('state', '!=', 'pending').where('finished_at', '<', cutoff).executeTakeFirst();
    const events = await this.database.db
      .deleteFrom('events')
      .where('created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'events.id'))))
      .executeTakeFirst();
    return { deliveries: Number(deliveries.numDeletedRows), events: Number(events.numDeletedRows) };
  }
}
