import type { EmailConfig } from '../config.js';
import type { DeliveriesRepository } from '../repositories/deliveries.repository.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import type { EmailObserver } from '../observer.js';
import { WebhookDispatcher } from './dispatcher.js';
import { networkFence, type Lookup } from '@mailconv/platform';

/** Random spread of each retry wait: ±20 % (decision 21: backoff with jitter). */
export const RETRY_JITTER = 0.2;

/**
 * This process's webhook dispatcher as the settings describe it, woken whenever this
 * process records an event; null when `EMAIL_WEBHOOKS_CONCURRENCY` is 0 (another process
 * sends the outbox).
 */
export function createDispatcher(options: {
  config: EmailConfig;
  deliveries: DeliveriesRepository;
  events: EventsRepository;
  clock: () => Date;
  log: { error(obj: object, msg: string): void };
  lookup?: Lookup;
  observer?: EmailObserver;
}): WebhookDispatcher | null {
  const w = options.config.webhooks;
  if (w.concurrency === 0) return null;
  const dispatcher = new WebhookDispatcher({
    deliveries: options.deliveries,
    concurrency: w.concurrency,
    perEndpoint: w.perEndpoint,
    timeoutMs: w.timeoutMs,
    retrySchedule: w.retrySchedule,
    jitter: RETRY_JITTER,
    pollMs: w.pollMs,
    allowInsecure: w.allowInsecure,
    ...(w.ca ? { ca: w.ca } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(w.restrictTo ? { fence: networkFence(w.restrictTo) } : {}),
    clock: options.clock,
    log: options.log,
    retentionDays: w.logDays,
    ...(options.observer?.webhookAttempt ? { onAttempt: options.observer.webhookAttempt.bind(options.observer) } : {}),
  });
  options.events.onDue(() => dispatcher.wake());
  return dispatcher;
}
