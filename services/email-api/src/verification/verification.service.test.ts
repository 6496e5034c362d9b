import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';
import { createEngine } from '@mailconv/verifier';
import { VerificationService } from './verification.service.js';

// verifyMany without quota: the service's ledger and charges must not be touched here.
const untouchable = new Proxy({}, {
  get() {
    throw new Error('verifyMany must not charge');
  },
}) as never;

let rig: RigHandle;
before(async () => {
  rig = await useRig();
});
after(async () => {
  await rig.release();
});

// 40,000 cached verifications take well over 40 ms on any machine: at one pause per 5 ms the
// loop turns many times; without pauses (or with pauses that are not shared) almost never.
test('long batches let the event loop turn while they verify, even with every DNS answer cached', async () => {
  const engine = createEngine({ dns: { servers: [rig.dnsServer], timeoutMs: 2000 }, smtp: null });
  const service = new VerificationService({ verifier: engine.verifier, quota: untouchable, charges: untouchable, clock: () => new Date(), smtpAvailable: false, batchConcurrency: 16 });
  const options = { smtp: false, catchAll: false };
  // Warm the cache: from here on every verification resolves as a microtask.
  await service.verifyMany([`alice@${D.valid}`, `x@${D.aOnly}`], options, () => false);

  const list = (n: number, domain: string) => Array.from({ length: n }, (_, i) => `user${i}@${domain}`);
  let turns = 0;
  const ticker = setInterval(() => turns++, 1);
  // Two at once, as a batch request and a bulk-job chunk would be: both must pause together.
  const [a, b] = await Promise.all([service.verifyMany(list(20_000, D.valid), options, () => false), service.verifyMany(list(20_000, D.aOnly), options, () => false)]);
  clearInterval(ticker);

  assert.ok(turns >= 8, `the event loop turned ${turns} times during 40,000 verifications`);
  assert.equal(a!.length, 20_000);
  assert.deepEqual([a![0]!.email, a![19_999]!.email, b![7]!.email], [`user0@${D.valid}`, `user19999@${D.valid}`, `user7@${D.aOnly}`], 'results in input order');
  assert.ok(a!.every((r) => r.status === 'valid'));
});
