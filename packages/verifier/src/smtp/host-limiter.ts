/** A slot on one MX address, held from {@link HostLimiter.acquire} until given back. */
export interface HostSlot<T> {
  /** An idle connection that came with the slot (its holder parked it), or null: open one. */
  readonly reused: T | null;
  /** Gives the slot back; the holder has closed its connection (or never opened one). A second call does nothing. */
  release(): void;
  /**
   * Gives the slot back with its connection still open: the next holder of a slot on the
   * same address gets it instead of opening one. Nobody within the idle time: it is closed.
   */
  park(item: T): void;
}

interface Idle<T> {
  item: T;
  timer: NodeJS.Timeout;
}

/**
 * At most `limit` connections per MX address, open or being opened, counting parked (idle)
 * ones: big providers throttle or block a source that opens many connections at once, and
 * a bulk job must not hammer one host. A parked connection goes to the next holder of a
 * slot on its address (any domain that MX serves), the way an MTA's connection cache
 * reuses a session, and is closed after `idleMs` without one.
 */
export class HostLimiter<T> {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, Array<(slot: HostSlot<T>) => void>>();
  private readonly idle = new Map<string, Array<Idle<T>>>();

  constructor(
    private readonly limit: number,
    private readonly idleMs: number,
    private readonly close: (item: T) => void,
  ) {}

  /** Waits for a slot on `key`, taking a parked connection when there is one; `limit`: this key's own limit (provider politeness). */
  acquire(key: string, limit = this.limit): Promise<HostSlot<T>> {
    const parked = this.idle.get(key)?.pop();
    if (parked) {
      clearTimeout(parked.timer);
      if (this.idle.get(key)?.length === 0) this.idle.delete(key);
      return Promise.resolve(this.slot(key, parked.item));
    }
    const n = this.active.get(key) ?? 0;
    if (n < limit) {
      this.active.set(key, n + 1);
      return Promise.resolve(this.slot(key, null));
    }
    return new Promise((resolve) => {
      const q = this.waiting.get(key) ?? [];
      q.push(resolve);
      this.waiting.set(key, q);
    });
  }

  /** Slots held on `key` (connections open, being opened or parked). */
  inUse(key: string): number {
    return this.active.get(key) ?? 0;
  }

  /** Closes parked connections (every one, or up to `max` that `match`) and gives their slots back; how many it closed. */
  closeIdle(match: (item: T) => boolean = () => true, max = Infinity): number {
    let closed = 0;
    for (const [key, list] of this.idle) {
      for (let i = list.length - 1; i >= 0 && closed < max; i--) {
        const { item, timer } = list[i]!;
        if (!match(item)) continue;
        list.splice(i, 1);
        clearTimeout(timer);
        this.close(item);
        this.free(key);
        closed++;
      }
      if (list.length === 0) this.idle.delete(key);
      if (closed >= max) break;
    }
    return closed;
  }

  private slot(key: string, reused: T | null): HostSlot<T> {
    // Giving a slot back twice must not free a second one.
    let done = false;
    const once = () => {
      const first = !done;
      done = true;
      return first;
    };
    return {
      reused,
      release: () => {
        if (!once()) return;
        const next = this.nextWaiter(key);
        if (next) next(this.slot(key, null));
        else this.free(key);
      },
      park: (item: T) => {
        if (!once()) return;
        const next = this.nextWaiter(key);
        if (next) return next(this.slot(key, item));
        const timer = setTimeout(() => {
          const list = this.idle.get(key);
          const at = list?.findIndex((i) => i.item === item) ?? -1;
          if (!list || at < 0) return;
          list.splice(at, 1);
          if (list.length === 0) this.idle.delete(key);
          this.close(item);
          this.free(key);
        }, this.idleMs);
        timer.unref();
        const list = this.idle.get(key) ?? [];
        list.push({ item, timer });
        this.idle.set(key, list);
      },
    };
  }

  private nextWaiter(key: string): ((slot: HostSlot<T>) => void) | undefined {
    const q = this.waiting.get(key);
    const next = q?.shift();
    if (q && q.length === 0) this.waiting.delete(key);
    return next;
  }

  private free(key: string): void {
    const left = (this.active.get(key) ?? 1) - 1;
    if (left <= 0) this.active.delete(key);
    else this.active.set(key, left);
  }
}
