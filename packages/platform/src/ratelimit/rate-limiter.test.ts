import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBase62 } from '../ids.js';
import { testRedisUrl } from '../testing/test-redis.js';
import { createRateLimiter } from './rate-limiter.js';

describe('rate limiter', () => {
  test('in memory: the limit holds within a minute, with remaining and reset', async () => {
    const limiter = createRateLimiter({ keyPrefix: 'test' });
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.consume('acct_a', 5));
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, true, true, false]);
    assert.deepEqual(decisions.map((d) => d.remaining), [4, 3, 2, 1, 0, 0]);
    assert.ok(decisions.every((d) => d.limit === 5 && d.resetSeconds >= 1 && d.resetSeconds <= 60));
    assert.equal((await limiter.consume('acct_b', 5)).allowed, true, 'keys are counted apart');
    await limiter.close();
  });

  test('longer windows (a day) report their reset in seconds', async () => {
    const limiter = createRateLimiter({ keyPrefix: 'test', windowSeconds: 86_400 });
    const first = await limiter.consume('client-a', 2);
    await limiter.consume('client-a', 2);
    const denied = await limiter.consume('client-a', 2);
    assert.equal(first.allowed, true);
    assert.equal(denied.allowed, false);
    assert.ok(denied.resetSeconds > 86_000 && denied.resetSeconds <= 86_400, String(denied.resetSeconds));
    await limiter.close();
  });

  test('in Redis: two limiters (two processes) share one count per key', async () => {
    const key = `acct_${randomBase62(10)}`;
    const a = createRateLimiter({ keyPrefix: 'test', redisUrl: testRedisUrl() });
    const b = createRateLimiter({ keyPrefix: 'test', redisUrl: testRedisUrl() });
    try {
      await Promise.all([a.ready(), b.ready()]);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).consume(key, 12)));
      assert.equal(results.filter((r) => r.allowed).length, 12);
      const next = await a.consume(key, 12);
      assert.equal(next.allowed, false);
      assert.ok(next.resetSeconds >= 1 && next.resetSeconds <= 60);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
