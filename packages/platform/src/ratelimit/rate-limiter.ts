import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { redactUrlCredentials } from '../config/settings.js';

/** The outcome of one request against a per-minute limit. A denial is a value, not an exception. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (at least 1). */
  resetSeconds: number;
}

/** Fixed windows per key (one minute unless set otherwise); the limit may differ per key (per plan). */
export interface RateLimiter {
  /** Counts one request of `key` against `perWindow` requests per window. */
  consume(key: string, perWindow: number): Promise<RateDecision>;
  /** Resolves once the shared store answers (at once in memory); rejects after `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void>;
  /** Whether a shared store is configured (a Redis URL). */
  readonly shared: boolean;
  /** Resolves when the shared store answers a PING now (at once in memory); rejects otherwise, without waiting for a reconnection. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A per-minute limiter: in process memory by default, or in Redis (`redisUrl`) so that
 * every API process of a service shares one count per key. If Redis stops answering, each
 * process falls back to its own in-memory count (the limit then holds per process) rather
 * than refusing traffic or letting it through unlimited.
 */
export function createRateLimiter(options: {
  keyPrefix: string;
  redisUrl?: string | undefined;
  /** Window length; 60 s by default. */
  windowSeconds?: number;
  onStoreError?: (err: unknown) => void;
}): RateLimiter {
  const WINDOW_SECONDS = options.windowSeconds ?? 60;
  const redis = options.redisUrl ? new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 }) : undefined;
  redis?.on('error', (err) => options.onStoreError?.(err));
  const limiters = new Map<number, RateLimiterAbstract>();

  const limiterFor = (points: number): RateLimiterAbstract => {
    let limiter = limiters.get(points);
    if (!limiter) {
      // The limit is part of the key, so a plan change starts a fresh window at the new limit.
      const keyPrefix = `${options.keyPrefix}:rl${WINDOW_SECONDS}:${points}`;
      const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix });
      limiter = redis ? new RateLimiterRedis({ storeClient: redis, points, duration: WINDOW_SECONDS, keyPrefix, insuranceLimiter: memory, rejectIfRedisNotReady: true }) : memory;
      limiters.set(points, limiter);
    }
    return limiter;
  };

  return {
    async consume(key, perWindow) {
      const limit = Math.max(1, Math.floor(perWindow));
      try {
        const res = await limiterFor(limit).consume(key, 1);
        return { allowed: true, limit, remaining: res.remainingPoints, resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
      }
    },
    async ready(timeoutMs = 5000) {
      if (!redis || redis.status === 'ready') return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          redis.off('ready', onReady);
          reject(new Error(`Redis at ${redactUrlCredentials(options.redisUrl ?? '')} not ready after ${timeoutMs} ms`));
        }, timeoutMs);
        const onReady = () => {
          clearTimeout(timer);
          resolve();
        };
        redis.once('ready', onReady);
      });
    },
    shared: redis !== undefined,
    async ping() {
      // enableOfflineQueue is off: while disconnected the command fails at once.
      if (redis) await redis.ping();
    },
    async close() {
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}
