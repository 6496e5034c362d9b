import type { ProviderLimits } from './provider-rules.js';

interface Provider {
  /** Sessions open or being opened (parked ones included). */
  open: number;
  /** No new session before this time (a pause or a back-off). */
  notBefore: number;
  /** The next back-off; doubles with each 421/4.7.x, back to the provider's first after a clean session. */
  backoff: number;
  waiting: Array<{ limits: ProviderLimits; resolve: () => void }>;
  timer: NodeJS.Timeout | null;
}

/**
 * Politeness per provider (issue 23): at most `sessions` open at once over all of its MX
 * addresses, and no new session before a pause (after a session closed for its rejections)
 * or a back-off (after a 421 or a 4.7.x reply) has passed. Waiters are served in order.
 * Shared by the prober instances of one engine, so their sessions count together.
 */
export class ProviderGate {
  private readonly providers = new Map<string, Provider>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Waits for room to open a session to `key`; call the returned function when that session has closed. */
  acquire(key: string, limits: ProviderLimits): Promise<() => void> {
    const p = this.entry(key);
    return new Promise((resolve) => {
      p.waiting.push({
        limits,
        resolve: () => {
          let done = false;
          resolve(() => {
            if (done) return;
            done = true;
            p.open--;
            this.drain(key, p);
          });
        },
      });
      this.drain(key, p);
    });
  }

  /** Sessions open to `key` now. */
  openTo(key: string): number {
    return this.providers.get(key)?.open ?? 0;
  }

  /** A 421 or a 4.7.x reply: new sessions to `key` wait the current back-off, and the next one is twice as long. */
  backOff(key: string, limits: ProviderLimits): void {
    if (limits.backoffMs <= 0) return;
    const p = this.entry(key);
    const wait = Math.min(Math.max(p.backoff, limits.backoffMs), limits.backoffMaxMs);
    p.notBefore = Math.max(p.notBefore, this.now() + wait);
    p.backoff = Math.min(wait * 2, limits.backoffMaxMs);
  }

  /** A session closed for its rejections: the next new session to `key` waits `ms`. */
  pause(key: string, ms: number): void {
    if (ms <= 0) return;
    const p = this.entry(key);
    p.notBefore = Math.max(p.notBefore, this.now() + ms);
  }

  /** A session went without a 421 or 4.7.x: the back-off starts from the provider's first again. */
  calm(key: string): void {
    const p = this.providers.get(key);
    if (p) p.backoff = 0;
  }

  private entry(key: string): Provider {
    let p = this.providers.get(key);
    if (!p) {
      p = { open: 0, notBefore: 0, backoff: 0, waiting: [], timer: null };
      this.providers.set(key, p);
    }
    return p;
  }

  private drain(key: string, p: Provider): void {
    for (;;) {
      const next = p.waiting[0];
      if (!next) break;
      if (p.open >= next.limits.sessions) return;
      const wait = p.notBefore - this.now();
      if (wait > 0) {
        if (!p.timer) {
          p.timer = setTimeout(() => {
            p.timer = null;
            this.drain(key, p);
          }, wait);
        }
        return;
      }
      p.waiting.shift();
      p.open++;
      next.resolve();
    }
    // Forget providers with nothing open, nobody waiting and nothing to wait for.
    if (p.open === 0 && p.notBefore <= this.now() && p.backoff === 0 && !p.timer) this.providers.delete(key);
  }
}
