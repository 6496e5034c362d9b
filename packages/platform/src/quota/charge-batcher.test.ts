import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testBackends } from '../testing/test-database.js';
import { ChargeBatcher } from './charge-batcher.js';
import { useLedgerDatabase } from './ledger.test-support.js';

const NOV = new Date('2026-11-15T12:00:00Z');

for (const backend of testBackends()) {
  describe(`coalesced quota charges on ${backend}`, () => {
    const f = useLedgerDatabase(backend);

    test('charges of one turn that fit share one statement, each told the used it would have seen in arrival order', async () => {
      const id = await f.account('together@x.test');
      const other = await f.account('other@x.test');
      const charges = new ChargeBatcher(f.ledger);
      const results = await Promise.all([...Array.from({ length: 30 }, (_, i) => charges.charge(id, 1 + (i % 3), 100, NOV)), charges.charge(other, 7, 100, NOV)]);
      assert.deepEqual(charges.stats, { calls: 31, statements: 2 }, 'one statement per account');
      let used = 0;
      for (const [i, r] of results.slice(0, 30).entries()) {
        used += 1 + (i % 3);
        assert.deepEqual(r, { ok: true, period: '2026-11', limit: 100, used, remaining: 100 - used });
      }
      assert.deepEqual(results[30], { ok: true, period: '2026-11', limit: 100, used: 7, remaining: 93 });
      assert.equal(await f.ledger.used(id, NOV), 60);
    });

    test('when the sum does not fit, the calls are charged one by one in arrival order: nothing over the limit, nothing lost', async () => {
      const id = await f.account('crowd@x.test');
      const charges = new ChargeBatcher(f.ledger);
      assert.equal((await charges.charge(id, 30, 100, NOV)).ok, true);
      const results = await Promise.all(Array.from({ length: 60 }, () => charges.charge(id, 2, 100, NOV)));
      assert.deepEqual(
        results.map((r) => r.ok),
        Array.from({ length: 60 }, (_, i) => i < 35),
        'the first 35 in arrival order fit',
      );
      assert.deepEqual(results[34], { ok: true, period: '2026-11', limit: 100, used: 100, remaining: 0 });
      assert.deepEqual(results[35], { ok: false, required: 2, period: '2026-11', limit: 100, used: 100, remaining: 0 });
      assert.equal(await f.ledger.used(id, NOV), 100);
    });

    test('two batchers (two processes) charging one account at once never exceed the limit', async () => {
      const id = await f.account('two@x.test');
      const a = new ChargeBatcher(f.ledger);
      const b = new ChargeBatcher(f.ledger);
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).charge(id, 1 + (i % 5), 250, NOV)));
      const charged = results.reduce((sum, r, i) => sum + (r.ok ? 1 + (i % 5) : 0), 0);
      assert.equal(await f.ledger.used(id, NOV), charged, 'used is exactly what was granted');
      assert.ok(charged <= 250 && charged >= 245, `charged ${charged}`);
    });

    test('bad units are refused before anything is charged', async () => {
      const id = await f.account('bad@x.test');
      const charges = new ChargeBatcher(f.ledger);
      await assert.rejects(charges.charge(id, -1, 100, NOV), RangeError);
      await assert.rejects(charges.charge(id, 0.5, 100, NOV), RangeError);
      assert.equal(await f.ledger.used(id, NOV), 0);
    });
  });
}
