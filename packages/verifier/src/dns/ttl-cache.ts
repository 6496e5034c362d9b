/** Milliseconds since an arbitrary origin; injected so tests can move time. */
export type Clock = () => number;

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * A bounded TTL cache that also shares in-flight work: while a value is being computed,
 * every caller asking for the same key gets the same promise, so a burst of lookups for
 * one domain sends one query. Each value chooses its own TTL (positive or negative
 * answers live for different times); a TTL of 0 caches nothing beyond the in-flight
 * promise. When full, the oldest entry is dropped (Map keeps insertion order).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Promise<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly clock: Clock,
  ) {}

  /** Cached value for `key`, or the result of `compute`, stored for `ttlOf(value)` ms. */
  get(key: string, compute: () => Promise<V>, ttlOf: (value: V) => number): Promise<V> {
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.expiresAt > this.clock()) return Promise.resolve(hit.value);
      this.entries.delete(key);
    }
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const promise = compute().then(
      (value) => {
        this.inflight.delete(key);
        const ttl = ttlOf(value);
        if (ttl > 0 && this.maxEntries > 0) {
          if (this.entries.size >= this.maxEntries) {
            const oldest = this.entries.keys().next();
            if (!oldest.done) this.entries.delete(oldest.value);
          }
          this.entries.set(key, { value, expiresAt: this.clock() + ttl });
        }
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, promise);
    return promise;
  }

  /** The cached value of `key` if present and fresh, without starting a lookup. */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    return hit && hit.expiresAt > this.clock() ? hit.value : undefined;
  }

  /** Number of stored (possibly expired) values. */
  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
