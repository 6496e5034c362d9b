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

/** A rate-limited MX host (issue 49): no new session before `until`; `next` the cool-down after another rate limit. */
interface CoolingHost {
  until: number;
  next: number;
  /** Sessions at once to the host from now on (lowered by each rate limit). */
  sessions: number;
  /** Forgotten after this: the host has been quiet for a whole maximum cool-down. */
  forgetAt: number;
}

/** A host's cool-down told by another process (issue 49's shared limits): `until` is its end, epoch milliseconds. */
export type CoolDownListener = (host: string, until: number, sessions: number) => void;

/**
 * Politeness per provider (issue 23): at most `sessions` open at once over all of its MX
 * addresses, and no new session before a pause (after a session closed for its rejections)
 * or a back-off (after a 421 or a 4.7.x reply) has passed. Waiters are served in order.
 * Shared by the prober instances of one engine, so their sessions count together.
 */
export class ProviderGate {
  private readonly providers = new Map<string, Provider>();
  private readonly hosts = new Map<string, CoolingHost>();
  /** Told of every cool-down this process starts (to share it, e.g. through Redis). */
  onCoolDown: CoolDownListener | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * A rate-limit reply from MX host `host` (issue 49): no new session to it for a cool-down
   * that starts at `initialMs`, doubles with each rate limit while it is remembered, up to
   * `maxMs`; and its sessions at once are halved (at least 1), from `sessions`. Returns the cool-down's end.
   */
  coolDown(host: string, initialMs: number, maxMs: number, sessions: number): number {
    if (initialMs <= 0) return 0;
    const now = this.now();
    const h = this.liveHost(host, now);
    const wait = Math.min(Math.max(h?.next ?? initialMs, initialMs), maxMs);
    const entry: CoolingHost = { until: Math.max(h?.until ?? 0, now + wait), next: Math.min(wait * 2, maxMs), sessions: Math.max(1, Math.floor(Math.min(h?.sessions ?? sessions, sessions) / 2)), forgetAt: 0 };
    entry.forgetAt = entry.until + maxMs;
    this.hosts.set(host, entry);
    this.onCoolDown?.(host, entry.until, entry.sessions);
    return entry.until;
  }

  /** A cool-down another process started (shared limits): kept when it ends later than ours. */
  noteCoolDown(host: string, until: number, sessions: number, maxMs: number): void {
    const h = this.liveHost(host, this.now());
    if (h && h.until >= until) return;
    this.hosts.set(host, { until, next: h?.next ?? 0, sessions: Math.min(h?.sessions ?? sessions, sessions), forgetAt: until + maxMs });
  }

  /** Milliseconds left of `host`'s cool-down (0: none). */
  coolingFor(host: string): number {
    const h = this.liveHost(host, this.now());
    return h ? Math.max(0, h.until - this.now()) : 0;
  }

  /** Sessions at once allowed to `host` after its rate limits, at most `limit`. */
  hostSessions(host: string, limit: number): number {
    const h = this.liveHost(host, this.now());
    return h ? Math.min(limit, h.sessions) : limit;
  }

  /** MX hosts cooling down now, and the longest time left (ms). */
  coolingHosts(): { hosts: number; longestMs: number } {
    const now = this.now();
    let hosts = 0;
    let longestMs = 0;
    for (const key of [...this.hosts.keys()]) {
      const h = this.liveHost(key, now);
      if (!h || h.until <= now) continue;
      hosts++;
      longestMs = Math.max(longestMs, h.until - now);
    }
    return { hosts, longestMs };
  }

  private liveHost(host: string, now: number): CoolingHost | null {
    const h = this.hosts.get(host);
    if (!h) return null;
    if (h.forgetAt <= now) {
      this.hosts.delete(host);
      return null;
    }
    return h;
  }

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
