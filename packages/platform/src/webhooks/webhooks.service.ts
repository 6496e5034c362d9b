import { AppError } from '../errors/app-error.js';
import { checkUrl, type EgressPolicy, type Lookup } from '../egress/guard.js';
import { randomBase62 } from '../ids.js';
import type { DeliveriesRepository, DeliveryLogEntry } from './deliveries.repository.js';
import type { EventsRepository } from './events.repository.js';
import { MAX_ACTIVE_WEBHOOKS, type WebhookRecord, type WebhooksRepository } from './webhooks.repository.js';

export interface WebhooksServiceDeps {
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  events: EventsRepository;
  clock: () => Date;
  /** The events an endpoint can subscribe to, in their canonical order (the service's contract). */
  eventNames: readonly string[];
  /** Where endpoints and per-request URLs may point: `webhookPolicy()` (the dispatcher checks again at delivery). */
  policy: EgressPolicy;
}

/** The per-request signing identity as the API shows it (the secret only when it is made). */
export interface RequestIdentity {
  webhook_id: string;
  created_at: string;
}

/**
 * The rules of an account's webhook endpoints (email decisions 20–23, for both services):
 * which URLs may be added (the egress guard of `packages/platform`, the same check the
 * dispatcher repeats at delivery), the limit of active endpoints, the per-request signing
 * identity, the delivery log and redelivery. Failures are AppErrors of the services'
 * shared codes; routes only map them.
 */
export class WebhooksService {
  constructor(private readonly deps: WebhooksServiceDeps) {}

  get eventNames(): readonly string[] {
    return this.deps.eventNames;
  }

  list(accountId: string): Promise<WebhookRecord[]> {
    return this.deps.webhooks.listActive(accountId);
  }

  /** Adds an endpoint after checking its URL and events; the signing secret is in this answer only. */
  async create(accountId: string, input: { url: string; events?: string | undefined }): Promise<WebhookRecord & { secret: string }> {
    const events = parseEvents(input.events, this.deps.eventNames);
    const check = await checkUrl(input.url, this.deps.policy);
    if (!check.ok) throw new AppError('invalid_request', `Webhook URL: ${check.message}`, { field: 'url' });
    const secret = `whsec_${randomBase62(32)}`;
    const created = await this.deps.webhooks.create(accountId, { url: check.url.toString(), events, secret }, this.deps.clock());
    if (created === 'limit_reached') throw new AppError('webhook_limit_reached', `At most ${MAX_ACTIVE_WEBHOOKS} active webhook endpoints; delete one first.`);
    return { ...created, secret };
  }

  async remove(accountId: string, id: string): Promise<void> {
    if (!(await this.deps.webhooks.remove(accountId, id, this.deps.clock()))) throw new AppError('not_found', `No active webhook ${id} on this account.`);
  }

  /** Makes (or replaces) the secret that signs deliveries to per-request `webhook_url`s; it is in this answer only. */
  async rotateRequestSecret(accountId: string): Promise<RequestIdentity & { secret: string }> {
    const secret = `whsec_${randomBase62(32)}`;
    return { ...(await this.deps.webhooks.setRequestSecret(accountId, secret, this.deps.clock())), secret };
  }

  requestIdentity(accountId: string): Promise<RequestIdentity | undefined> {
    return this.deps.webhooks.requestIdentity(accountId);
  }

  /**
   * Checks a per-request `webhook_url` as an endpoint's URL is checked, and that the account
   * has a signing identity for it; the URL as it will be stored. Field errors name `field`.
   */
  async checkRequestTarget(accountId: string, url: string, field = 'webhook_url'): Promise<string> {
    const check = await checkUrl(url, this.deps.policy);
    if (!check.ok) throw new AppError('invalid_request', `Webhook URL: ${check.message}`, { field });
    if (!(await this.deps.webhooks.requestIdentity(accountId))) {
      throw new AppError('invalid_request', 'Deliveries to a per-request webhook_url are signed with the account’s request signing secret; create it first (POST /api/dashboard/webhooks/request-secret).', { field });
    }
    return check.url.toString();
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

/** `events` as stored: the given names, checked, deduplicated, in the canonical order; all of them when omitted. */
function parseEvents(raw: string | undefined, known: readonly string[]): string {
  if (raw === undefined) return known.join(',');
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !known.includes(n));
  if (names.length === 0 || unknown.length) {
    throw new AppError('invalid_request', `Unknown or missing event names${unknown.length ? ` (${unknown.join(', ')})` : ''}; use a comma-separated subset of ${known.join(', ')}.`, { field: 'events' });
  }
  return known.filter((e) => names.includes(e)).join(',');
}

/**
 * Where webhooks may go (email decision 23): public HTTPS only; `…_WEBHOOKS_ALLOW_INSECURE`
 * also allows http:// and non-public addresses (development); `fence` is
 * `…_WEBHOOKS_RESTRICT_TO` (tests: loopback only).
 */
export function webhookPolicy(allowInsecure: boolean, options: { lookup?: Lookup | undefined; fence?: ((address: string) => boolean) | undefined } = {}): EgressPolicy {
  return {
    schemes: allowInsecure ? ['https:', 'http:'] : ['https:'],
    allowPrivate: allowInsecure,
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.fence ? { fence: options.fence } : {}),
  };
}
