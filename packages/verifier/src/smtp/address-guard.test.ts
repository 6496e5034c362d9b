import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPrivateAddress } from './address-guard.js';
import { HostLimiter } from './host-limiter.js';

test('loopback, private and reserved addresses are refused; public ones are not', () => {
  for (const a of ['127.0.0.1', '127.77.5.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '192.0.2.7', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::2', 'fc00::1', '2001:db8::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:a9fe:a9fe', 'not-an-ip']) {
    assert.equal(isPrivateAddress(a), true, a);
  }
  for (const a of ['8.8.8.8', '172.32.0.1', '11.0.0.1', '2a00:1450:4001::1a', '::ffff:8.8.4.4', '::ffff:808:404']) {
    assert.equal(isPrivateAddress(a), false, a);
  }
});

test('the per-host limiter never lets more than the limit in, and hands slots over in order', async () => {
  const limiter = new HostLimiter(2);
  const order: number[] = [];
  let peak = 0;
  await Promise.all(
    Array.from({ length: 6 }, async (_, i) => {
      const release = await limiter.acquire('mx:25');
      peak = Math.max(peak, limiter.inUse('mx:25'));
      order.push(i);
      await new Promise((r) => setImmediate(r));
      release();
      release(); // a second call must not free another slot
    }),
  );
  assert.equal(peak, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5]);
  assert.equal(limiter.inUse('mx:25'), 0);
  const other = await limiter.acquire('other:25');
  assert.equal(limiter.inUse('other:25'), 1);
  other();
});
