import type { Database } from '../db/database.js';
import type { Lookup } from '../egress/guard.js';
import { networkFence } from '../egress/addresses.js';
import type { WebhookConfig } from './config.js';
import { DeliveriesRepository } from './deliveries.repository.js';
import { WebhookDispatcher, type DispatcherOptions } from './dispatcher.js';
import { EventsRepository } from './events.repository.js';
import type { WebhookTables } from './schema.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { webhookPolicy, WebhooksService } from './webhooks.service.js';

/** Random spread of each retry wait: ±20 % (email decision 21: backoff with jitter). */
export const RETRY_JITTER = 0.2;

/**
 * The egress rules of a service's webhooks as its settings describe them. `atDelivery`
 * adds the fence (`…_WEBHOOKS_RESTRICT_TO`), which limits what is connected to; a URL is
 * judged at creation by what it is (scheme, credentials, public addresses).
 */
export function configuredWebhookPolicy(config: WebhookConfig, lookup?: Lookup, atDelivery = false) {
  return webhookPolicy(config.allowInsecure, { lookup, fence: atDelivery && config.restrictTo ? networkFence(config.restrictTo) : undefined });
}

/**
 * This process's webhook dispatcher as the settings describe it, woken whenever this
 * process records an event; null when `…_WEBHOOKS_CONCURRENCY` is 0 (another process
 * sends the outbox).
 */
export function createDispatcher(options: {
  config: WebhookConfig;
  deliveries: DeliveriesRepository;
  events: EventsRepository;
  userAgent: string;
  clock: () => Date;
  log: DispatcherOptions['log'];
  lookup?: Lookup | undefined;
  onAttempt?: DispatcherOptions['onAttempt'];
}): WebhookDispatcher | null {
  const w = options.config;
  if (w.concurrency === 0) return null;
  const dispatcher = new WebhookDispatcher({
    deliveries: options.deliveries,
    concurrency: w.concurrency,
    perEndpoint: w.perEndpoint,
    timeoutMs: w.timeoutMs,
    retrySchedule: w.retrySchedule,
    jitter: RETRY_JITTER,
    pollMs: w.pollMs,
    policy: configuredWebhookPolicy(w, options.lookup, true),
    userAgent: options.userAgent,
    ...(w.ca ? { ca: w.ca } : {}),
    clock: options.clock,
    log: options.log,
    retentionDays: w.logDays,
    ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
  });
  options.events.onDue(() => dispatcher.wake());
  return dispatcher;
}

/** A service's webhooks: the outbox it records events in, the rules of its endpoints, and this process's dispatcher. */
export interface ServiceWebhooks {
  events: EventsRepository;
  deliveries: DeliveriesRepository;
  service: WebhooksService;
  /** Null when `…_WEBHOOKS_CONCURRENCY` is 0; start and stop it with the process. */
  dispatcher: WebhookDispatcher | null;
}

/**
 * The webhook stack of a service, wired the same way in both: events and their deliveries
 * are rows of the service's own database (the outbox); this process's dispatcher sends
 * whatever is due, sharing the work with other processes through leases.
 */
export function openWebhooks<DB extends WebhookTables>(options: {
  database: Database<DB>;
  config: WebhookConfig;
  /** The events endpoints can subscribe to, in their canonical order. */
  eventNames: readonly string[];
  userAgent: string;
  clock: () => Date;
  log: DispatcherOptions['log'];
  /** Host lookup of the address checks (the system resolver when absent). */
  lookup?: Lookup | undefined;
  onAttempt?: DispatcherOptions['onAttempt'];
}): ServiceWebhooks {
  // As openServiceCore: the service's database has these tables among its own.
  const database = options.database as unknown as Database<WebhookTables>;
  const deliveries = new DeliveriesRepository(database);
  const events = new EventsRepository(database, deliveries);
  const service = new WebhooksService({
    webhooks: new WebhooksRepository(database as unknown as ConstructorParameters<typeof WebhooksRepository>[0]),
    deliveries,
    events,
    clock: options.clock,
    eventNames: options.eventNames,
    policy: configuredWebhookPolicy(options.config, options.lookup),
  });
  const dispatcher = createDispatcher({ ...options, deliveries, events });
  return { events, deliveries, service, dispatcher };
}
