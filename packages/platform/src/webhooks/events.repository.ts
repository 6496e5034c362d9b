import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { newId } from '../ids.js';
import type { DeliveriesRepository } from './deliveries.repository.js';
import type { WebhookTables } from './schema.js';

/** A recorded event: its id and how many endpoint deliveries it created. */
export interface RecordedEvent {
  id: string;
  deliveries: number;
}

/**
 * The webhook outbox: events, each with one delivery per active endpoint of the account
 * subscribed to it, written together.
 */
export class EventsRepository {
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly database: Database<WebhookTables>,
    private readonly deliveries: DeliveriesRepository,
  ) {}

  /** `fn` runs when deliveries may have become due (a dispatcher of this process wakes up). */
  onDue(fn: () => void): void {
    this.listeners.push(fn);
  }

  /** Tells this process's dispatchers that deliveries are due; call after the commit that created them. */
  notify(): void {
    for (const fn of this.listeners) fn();
  }

  /**
   * Records `payload` (serialised once, so every attempt sends the same bytes) and its
   * deliveries. Pass the transaction of the state change that causes the event, so that
   * all commit or none does, and call {@link notify} after the commit. Without one, the
   * event has its own transaction and the dispatchers are told at once, unless `holdMs`
   * is given: the deliveries then wait until {@link release} (or `holdMs`, should this
   * process die first). `targetUrl`: a per-request `webhook_url` that gets the event too.
   * `exec` is the service's own transaction: its database has the webhook tables.
   */
  async record<DB extends WebhookTables>(
    accountId: string,
    type: string,
    payload: Record<string, unknown>,
    now: Date,
    exec?: Kysely<DB>,
    options: { holdMs?: number; targetUrl?: string | undefined } = {},
  ): Promise<RecordedEvent> {
    const id = newId('evt', now.getTime());
    const dueAt = new Date(now.getTime() + (options.holdMs ?? 0));
    const write = async (trx: Kysely<WebhookTables>) => {
      await trx.insertInto('events').values({ id, account_id: accountId, type, payload: JSON.stringify(payload), created_at: now.toISOString() }).execute();
      return this.deliveries.fanOut(trx, { id, accountId, type, targetUrl: options.targetUrl }, now, dueAt);
    };
    // The one assertion: a service's Kysely<DB> is its database, whose tables include these.
    if (exec) return { id, deliveries: await write(exec as unknown as Kysely<WebhookTables>) };
    const deliveries = await this.database.writeTransaction(write);
    if (deliveries > 0 && !options.holdMs) this.notify();
    return { id, deliveries };
  }

  /** Makes a held event's deliveries due now and tells the dispatchers. */
  async release(eventId: string, now: Date): Promise<void> {
    await this.deliveries.releaseEvent(eventId, now);
    this.notify();
  }
}
