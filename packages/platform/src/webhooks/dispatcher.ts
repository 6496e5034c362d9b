import { randomUUID } from 'node:crypto';
import { signWebhook } from '@mailconv/client/webhooks';
import { checkUrl, type EgressPolicy } from '../egress/guard.js';
import type { AttemptOutcome, ClaimedDelivery, DeliveriesRepository } from './deliveries.repository.js';
import { sendWebhook, type AttemptResult, type SendOptions } from './sender.js';

export interface DispatcherOptions {
  deliveries: DeliveriesRepository;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** In flight at once per endpoint in this process: a slow endpoint holds at most this many slots. */
  perEndpoint: number;
  /** Whole attempt (decision 21: 10 s). */
  timeoutMs: number;
  /** Waits before retries 1, 2, …; after the last, the delivery is dead-lettered. */
  retrySchedule: readonly number[];
  /** Each wait is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
  /** How often an idle dispatcher looks for due deliveries (an event in this process wakes it at once). */
  pollMs: number;
  /** Where deliveries may go: checked again before every attempt (`webhookPolicy()` with the service's fence). */
  policy: EgressPolicy;
  /** Names the service in every delivery (email decision 20). */
  userAgent: string;
  /** Extra CA certificates to trust (PEM). */
  ca?: string;
  clock: () => Date;
  log: { error(obj: object, msg: string): void; info?(obj: object, msg: string): void };
  /** Finished deliveries are deleted from the log after this many days (checked hourly). */
  retentionDays: number;
  /** Told of every attempt recorded by this process, with how it ended and how long it took (metrics). */
  onAttempt?: (outcome: 'delivered' | 'retry' | 'dead' | 'cancelled', seconds: number) => void;
}

/** The wait before the retry that follows `failures` failed attempts, with jitter; null when the schedule is spent. */
export function retryDelay(schedule: readonly number[], failures: number, jitter: number, random = Math.random): number | null {
  const base = schedule[failures - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - jitter + 2 * jitter * random()));
}

/**
 * Sends the outbox: claims due deliveries (a lease per delivery, so any number of
 * processes can share one database), checks the endpoint's URL again (the SSRF rules, with
 * the connection pinned to the checked address), POSTs the stored payload signed with the
 * endpoint's secret, and records the attempt with the delivery's next state: delivered on
 * any 2xx, otherwise due again after the schedule's next wait, or dead-lettered once the
 * schedule is spent. At most `perEndpoint` attempts per endpoint run at once here, so a
 * slow endpoint cannot take every slot. A process killed mid-attempt leaves the lease to
 * run out: the delivery is attempted again with the same id and body.
 */
export class WebhookDispatcher {
  private readonly owner = randomUUID();
  private stopping = false;
  private running: Promise<void> | null = null;
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private lastPrune = 0;
  private claims = 0;

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    if (!this.running) this.running = this.loop();
  }

  /** Look for due deliveries now (an event was just recorded or released in this process). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops claiming and waits for the attempts in flight (each bounded by the time-out). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.running;
    await Promise.all([...this.attempts]);
  }

  private busy(): string[] {
    return [...this.inFlight].filter(([, n]) => n >= this.o.perEndpoint).map(([id]) => id);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      try {
        await this.fill();
        await this.prune();
      } catch (err) {
        this.o.log.error({ err }, 'webhook dispatcher: could not read the outbox');
      }
      if (this.stopping || this.woken) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.o.pollMs);
        this.wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }

  /** Starts attempts for due deliveries while slots are free. */
  private async fill(): Promise<void> {
    for (;;) {
      const free = this.o.concurrency - this.attempts.size;
      if (free <= 0 || this.stopping) return;
      const now = this.o.clock();
      const due = await this.o.deliveries.due(now, this.busy(), free * 4);
      let started = 0;
      for (const d of due) {
        if (this.attempts.size >= this.o.concurrency) break;
        if ((this.inFlight.get(d.webhookId) ?? 0) >= this.o.perEndpoint) continue;
        const token = `${this.owner}:${++this.claims}`;
        // The lease: twice the time-out, so a live attempt always ends inside it.
        const claimed = await this.o.deliveries.claim(d.id, now, new Date(now.getTime() + 2 * this.o.timeoutMs), token);
        if (!claimed) continue;
        this.inFlight.set(d.webhookId, (this.inFlight.get(d.webhookId) ?? 0) + 1);
        const attempt = this.attempt(claimed)
          .catch((err: unknown) => this.o.log.error({ err, delivery: claimed.id }, 'webhook dispatcher: attempt failed to record'))
          .finally(() => {
            this.attempts.delete(attempt);
            const left = (this.inFlight.get(d.webhookId) ?? 1) - 1;
            if (left) this.inFlight.set(d.webhookId, left);
            else this.inFlight.delete(d.webhookId);
            this.wake();
          });
        this.attempts.add(attempt);
        started++;
      }
      if (started === 0) return;
    }
  }

  private async attempt(claimed: ClaimedDelivery): Promise<void> {
    const startedAt = this.o.clock();
    let result: Pick<AttemptResult, 'ok' | 'status' | 'durationMs' | 'error'>;
    if (!claimed.active) {
      result = { ok: false, status: null, durationMs: 0, error: 'webhook_deleted' };
    } else {
      const check = await checkUrl(claimed.url, this.o.policy);
      if (!check.ok) result = { ok: false, status: null, durationMs: 0, error: check.problem };
      else {
        const send: SendOptions = {
          url: check.url,
          target: check.target,
          body: claimed.payload,
          headers: {
            'x-service-signature': signWebhook(claimed.payload, claimed.secret),
            'x-service-event': claimed.event,
            'x-service-delivery': claimed.id,
            'user-agent': this.o.userAgent,
          },
          timeoutMs: this.o.timeoutMs,
          ...(this.o.ca ? { ca: this.o.ca } : {}),
        };
        result = await sendWebhook(send);
      }
    }
    const now = this.o.clock();
    let outcome: AttemptOutcome;
    if (result.ok) outcome = { ...result, startedAt, state: 'delivered', nextAttemptAt: null };
    else if (result.error === 'webhook_deleted') outcome = { ...result, startedAt, state: 'cancelled', nextAttemptAt: null };
    else {
      const wait = retryDelay(this.o.retrySchedule, claimed.failures + 1, this.o.jitter);
      outcome = wait === null ? { ...result, startedAt, state: 'dead', nextAttemptAt: null } : { ...result, startedAt, state: 'pending', nextAttemptAt: new Date(now.getTime() + wait) };
    }
    const recorded = await this.o.deliveries.recordAttempt(claimed, outcome, now);
    if (recorded) this.o.onAttempt?.(outcome.state === 'pending' ? 'retry' : outcome.state, result.durationMs / 1000);
    if (!recorded) this.o.log.error({ delivery: claimed.id }, 'webhook dispatcher: lease lost before the attempt was recorded; another process owns the delivery');
    else if (outcome.state === 'dead') this.o.log.error({ delivery: claimed.id, webhook: claimed.webhookId, error: outcome.error }, 'webhook delivery dead-lettered after its retry schedule');
  }

  private async prune(): Promise<void> {
    const now = this.o.clock().getTime();
    if (now - this.lastPrune < 3_600_000) return;
    this.lastPrune = now;
    await this.o.deliveries.prune(new Date(now - this.o.retentionDays * 86_400_000));
  }
}
