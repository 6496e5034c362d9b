import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TtlCache } from './ttl-cache.js';

test('one computation per key while in flight, then the stored value until it expires', async () => {
  let now = 0;
  let calls = 0;
  const cache = new TtlCache<number>(10, () => now);
  const compute = async () => {
    calls++;
    await new Promise((r) => setTimeout(r, 5));
    return calls;
  };
  const values = await Promise.all(Array.from({ length: 20 }, () => cache.get('k', compute, () => 100)));
  assert.deepEqual(new Set(values), new Set([1]));
  assert.equal(calls, 1);
  now = 99;
  assert.equal(await cache.get('k', compute, () => 100), 1);
  now = 100;
  assert.equal(await cache.get('k', compute, () => 100), 2);
});

test('a TTL of 0 and a failure keep nothing; the cache stays within its size', async () => {
  const cache = new TtlCache<string>(2, () => 0);
  let n = 0;
  await cache.get('a', async () => `v${++n}`, () => 0);
  assert.equal(await cache.get('a', async () => `v${++n}`, () => 0), 'v2');
  await assert.rejects(cache.get('b', async () => Promise.reject(new Error('boom')), () => 10), /boom/);
  assert.equal(await cache.get('b', async () => 'ok', () => 10), 'ok');
  await cache.get('c', async () => 'c', () => 10);
  await cache.get('d', async () => 'd', () => 10);
  assert.equal(cache.size, 2);
});

test('peek returns a fresh stored value without computing, and nothing once it expired', async () => {
  let now = 0;
  const cache = new TtlCache<string>(10, () => now);
  assert.equal(cache.peek('k'), undefined);
  const pending = cache.get('k', async () => 'v', () => 50);
  assert.equal(cache.peek('k'), undefined, 'an in-flight value is not peekable');
  await pending;
  assert.equal(cache.peek('k'), 'v');
  now = 50;
  assert.equal(cache.peek('k'), undefined);
});
