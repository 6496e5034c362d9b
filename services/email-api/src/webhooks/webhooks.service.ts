import { AppError, checkUrl, randomBase62, type EgressPolicy, type Lookup } from '@mailconv/platform';
import type { DeliveriesRepository, DeliveryLogEntry } from '../repositories/deliveries.repository.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import { MAX_ACTIVE_WEBHOOKS, type WebhookRecord, type WebhooksRepository } from '../repositories/webhooks.repository.js';

/** The events an endpoint can subscribe to (contract, Events). */
export const WEBHOOK_EVENTS = ['batch.completed', 'job.completed', 'job.failed'] as const;

export interface WebhooksServiceDeps {
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  events: EventsRepository;
  clock: () => Date;
  /** `EMAIL_WEBHOOKS_ALLOW_INSECURE`: http:// and non-public targets allowed (development). */
  allowInsecure: boolean;
  /** Host lookup of the address check (the system resolver when absent). */
  lookup?: Lookup;
}

/**
 * The rules of an account's webhook endpoints (decisions 20–23): which URLs may be added
 * (the egress guard of `packages/platform`, the same check the dispatcher repeats at delivery),
 * the limit of active endpoints, the delivery log and redelivery. Failures are AppErrors
 * of the service's closed list; routes only map them.
 */
export class WebhooksService {
  constructor(private readonly deps: WebhooksServiceDeps) {}

  list(accountId: string): Promise<WebhookRecord[]> {
    return this.deps.webhooks.listActive(accountId);
  }

  /** Adds an endpoint after checking its URL and events; the signing secret is in this answer only. */
  async create(accountId: string, input: { url: string; events?: string | undefined }): Promise<WebhookRecord & { secret: string }> {
    const events = parseEvents(input.events);
    const check = await checkUrl(input.url, webhookPolicy(this.deps.allowInsecure, this.deps.lookup));
    if (!check.ok) throw new AppError('invalid_request', `Webhook URL: ${check.message}`, { field: 'url' });
    const secret = `whsec_${randomBase62(32)}`;
    const created = await this.deps.webhooks.create(accountId, { url: check.url.toString(), events, secret }, this.deps.clock());
    if (created === 'limit_reached') throw new AppError('webhook_limit_reached', `At most ${MAX_ACTIVE_WEBHOOKS} active webhook endpoints; delete one first.`);
    return { ...created, secret };
  }

  async remove(accountId: string, id: string): Promise<void> {
    if (!(await this.deps.webhooks.remove(accountId, id, this.deps.clock()))) throw new AppError('not_found', `No active webhook ${id} on this account.`);
  }

  async deliveryLog(accountId: string, webhookId: string, limit: number): Promise<DeliveryLogEntry[]> {
    const log = await this.deps.deliveries.log(accountId, webhookId, limit);
    if (!log) throw new AppError('not_found', `No webhook ${webhookId} on this account.`);
    return log;
  }

  /** Puts a dead-lettered delivery back in the queue, due now, and wakes this process's dispatcher. */
  async redeliver(accountId: string, webhookId: string, deliveryId: string): Promise<void> {
    const r = await this.deps.deliveries.redeliver(accountId, webhookId, deliveryId, this.deps.clock());
    if (r === 'not_found') throw new AppError('not_found', `No delivery ${deliveryId} of webhook ${webhookId} on this account.`);
    if (r === 'not_dead') throw new AppError('conflict', `Delivery ${deliveryId} is not dead-lettered; only dead-lettered deliveries can be sent again.`);
    if (r === 'webhook_inactive') throw new AppError('conflict', `Webhook ${webhookId} was deleted; its deliveries cannot be sent again.`);
    this.deps.events.notify();
  }
}

/** `events` as stored: the given names, checked, deduplicated, in the canonical order; all three when omitted. */
function parseEvents(raw: string | undefined): string {
  if (raw === undefined) return WEBHOOK_EVENTS.join(',');
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(WEBHOOK_EVENTS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length) {
    throw new AppError('invalid_request', `Unknown or missing event names${unknown.length ? ` (${unknown.join(', ')})` : ''}; use a comma-separated subset of ${WEBHOOK_EVENTS.join(', ')}.`, { field: 'events' });
  }
  return WEBHOOK_EVENTS.filter((e) => names.includes(e)).join(',');
}

/**
 * Where webhooks may go (decision 23): public HTTPS only; `EMAIL_WEBHOOKS_ALLOW_INSECURE`
 * also allows http:// and non-public addresses (development).
 */
export function webhookPolicy(allowInsecure: boolean, lookup?: Lookup): EgressPolicy {
  return { schemes: allowInsecure ? ['https:', 'http:'] : ['https:'], allowPrivate: allowInsecure, ...(lookup ? { lookup } : {}) };
}
