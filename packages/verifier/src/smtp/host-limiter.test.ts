import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostLimiter } from './host-limiter.js';

test('the per-host limiter never lets more than the limit in, and hands slots over in order', async () => {
  const limiter = new HostLimiter<string>(2, 1000, () => undefined);
  const order: number[] = [];
  let peak = 0;
  await Promise.all(
    Array.from({ length: 6 }, async (_, i) => {
      const slot = await limiter.acquire('mx:25');
      peak = Math.max(peak, limiter.inUse('mx:25'));
      order.push(i);
      await new Promise((r) => setImmediate(r));
      slot.release();
      slot.release(); // a second call must not free another slot
    }),
  );
  assert.equal(peak, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5]);
  assert.equal(limiter.inUse('mx:25'), 0);
  const other = await limiter.acquire('other:25');
  assert.equal(limiter.inUse('other:25'), 1);
  other.release();
});

test('a parked connection goes to the next holder on its address, keeps its slot, and is closed when idle', async () => {
  const closed: string[] = [];
  const limiter = new HostLimiter<string>(1, 50, (c) => closed.push(c));
  const first = await limiter.acquire('mx:25');
  assert.equal(first.reused, null);
  const waiting = limiter.acquire('mx:25');
  first.park('conn-1');
  const second = await waiting;
  assert.equal(second.reused, 'conn-1', 'handed straight to the waiting holder');
  second.park('conn-1');
  assert.equal(limiter.inUse('mx:25'), 1, 'a parked connection holds its slot');
  const third = await limiter.acquire('mx:25');
  assert.equal(third.reused, 'conn-1');
  third.park('conn-1');
  await new Promise((r) => setTimeout(r, 120));
  assert.deepEqual(closed, ['conn-1']);
  assert.equal(limiter.inUse('mx:25'), 0);
  const fourth = await limiter.acquire('mx:25');
  assert.equal(fourth.reused, null);
  fourth.park('conn-2');
  limiter.closeIdle();
  assert.deepEqual(closed, ['conn-1', 'conn-2']);
  assert.equal(limiter.inUse('mx:25'), 0);
});
