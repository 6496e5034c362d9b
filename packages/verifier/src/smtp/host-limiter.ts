/**
 * At most `limit` concurrent sessions per MX address: big providers throttle or block a
 * source that opens many connections at once, and a bulk job must not hammer one host.
 */
export class HostLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limit: number) {}

  /** Waits for a slot on `key`; call the returned function exactly once to give it back. */
  async acquire(key: string): Promise<() => void> {
    const n = this.active.get(key) ?? 0;
    if (n < this.limit) {
      this.active.set(key, n + 1);
    } else {
      await new Promise<void>((resolve) => {
        const q = this.waiting.get(key) ?? [];
        q.push(resolve);
        this.waiting.set(key, q);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const q = this.waiting.get(key);
      const next = q?.shift();
      if (q && q.length === 0) this.waiting.delete(key);
      if (next) next();
      else {
        const left = (this.active.get(key) ?? 1) - 1;
        if (left <= 0) this.active.delete(key);
        else this.active.set(key, left);
      }
    };
  }

  /** Sessions currently open to `key`. */
  inUse(key: string): number {
    return this.active.get(key) ?? 0;
  }
}
