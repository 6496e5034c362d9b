import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testBackends } from '../testing/test-database.js';
import { useLedgerDatabase } from './ledger.test-support.js';

const run = promisify(execFile);
const HAMMER = fileURLToPath(new URL('../testing/quota-hammer.js', import.meta.url));
const NOV = new Date('2026-11-15T12:00:00Z');
const DEC = new Date('2026-12-01T00:00:00Z');

for (const backend of testBackends()) {
  describe(`quota ledger on ${backend}`, () => {
    const f = useLedgerDatabase(backend);

    test('charges fit under the limit; the charge that would cross it is refused whole', async () => {
      const id = await f.account('charge@x.test');
      assert.deepEqual(await f.ledger.charge(id, 60, 100, NOV), { ok: true, period: '2026-11', limit: 100, used: 60, remaining: 40 });
      assert.deepEqual(await f.ledger.charge(id, 41, 100, NOV), { ok: false, required: 41, period: '2026-11', limit: 100, used: 60, remaining: 40 });
      assert.equal((await f.ledger.charge(id, 40, 100, NOV)).ok, true);
      assert.equal((await f.ledger.charge(id, 1, 100, NOV)).ok, false);
      assert.equal((await f.ledger.charge(id, 0, 100, NOV)).ok, true);
      assert.equal(await f.ledger.used(id, NOV), 100);
      await assert.rejects(f.ledger.charge(id, -1, 100, NOV), RangeError);
      await assert.rejects(f.ledger.charge(id, 1.5, 100, NOV), RangeError);
    });

    test('a new calendar month (UTC) starts from zero', async () => {
      const id = await f.account('months@x.test');
      assert.equal((await f.ledger.charge(id, 100, 100, new Date('2026-11-30T23:59:59.999Z'))).ok, true);
      assert.deepEqual(await f.ledger.charge(id, 5, 100, DEC), { ok: true, period: '2026-12', limit: 100, used: 5, remaining: 95 });
      assert.equal(await f.ledger.used(id, NOV), 100);
    });

    test('reservations count at once and refunds never exceed them, even when retried', async () => {
      const id = await f.account('reserve@x.test');
      const r = await f.ledger.reserve(id, 50, 100, NOV);
      assert.ok(r.ok);
      assert.equal(r.used, 50);
      assert.equal((await f.ledger.reserve(id, 51, 100, NOV)).ok, false);
      assert.deepEqual(await f.ledger.refund(r.reservationId, 20), { ok: true, refunded: 20 });
      assert.deepEqual(await f.ledger.refund(r.reservationId, 31), { ok: false, reason: 'exceeds_reservation' });
      assert.deepEqual(await f.ledger.refund(r.reservationId, 30), { ok: true, refunded: 30 });
      assert.deepEqual(await f.ledger.refund(r.reservationId, 1), { ok: false, reason: 'exceeds_reservation' });
      assert.deepEqual(await f.ledger.refund('rsv_missing', 1), { ok: false, reason: 'not_found' });
      assert.equal(await f.ledger.used(id, NOV), 0);
    });

    test('a refund made next month goes back to the month that was charged', async () => {
      const id = await f.account('late-refund@x.test');
      const r = await f.ledger.reserve(id, 30, 100, NOV);
      assert.ok(r.ok);
      await f.ledger.charge(id, 7, 100, DEC);
      assert.deepEqual(await f.ledger.refund(r.reservationId, 10), { ok: true, refunded: 10 });
      assert.equal(await f.ledger.used(id, NOV), 20);
      assert.equal(await f.ledger.used(id, DEC), 7);
    });

    test('a plain charge can be given back, never below zero', async () => {
      const id = await f.account('uncharge@x.test');
      await f.ledger.charge(id, 10, 100, NOV);
      await f.ledger.refundCharge(id, '2026-11', 4);
      assert.equal(await f.ledger.used(id, NOV), 6);
      await f.ledger.refundCharge(id, '2026-11', 50);
      assert.equal(await f.ledger.used(id, NOV), 0);
    });

    test('a reservation inside a transaction that rolls back charges nothing', async () => {
      const id = await f.account('rollback@x.test');
      await assert.rejects(
        f.database.writeTransaction(async (trx) => {
          const r = await f.ledger.reserve(id, 40, 100, NOV, trx);
          assert.ok(r.ok);
          throw new Error('storing the job failed');
        }),
        /storing the job failed/,
      );
      assert.equal(await f.ledger.used(id, NOV), 0);
      const rows = await f.database.db.selectFrom('quota_reservations').selectAll().where('account_id', '=', id).execute();
      assert.equal(rows.length, 0);
    });

    test('concurrent charges over one connection pool never exceed the limit', async () => {
      const id = await f.account('pool@x.test');
      const results = await Promise.all(Array.from({ length: 300 }, () => f.ledger.charge(id, 7, 1000)));
      assert.equal(results.filter((r) => r.ok).length, 142);
      assert.equal(await f.ledger.used(id), 994);
    });

    test('several processes charging, reserving and refunding at once: never over the limit, no unit lost', async () => {
      const id = await f.account('hammer@x.test');
      const limit = 2000;
      const startAt = Date.now() + 1500;
      const processes = 4;
      const outputs = await Promise.all(
        Array.from({ length: processes }, (_, i) =>
          run(process.execPath, [HAMMER, JSON.stringify({ url: f.url, accountId: id, limit, ops: 160, seed: 1000 + i, startAt, parallel: backend === 'postgres' ? 4 : 1 })], { timeout: 120_000 }),
        ),
      );
      const totals = outputs.map((o) => JSON.parse(o.stdout) as { charged: number; reserved: number; refunded: number; denied: number; refundDenied: number });
      const sum = (k: keyof (typeof totals)[number]) => totals.reduce((n, t) => n + t[k], 0);
      const used = await f.ledger.used(id);
      assert.ok(used <= limit, `used ${used} <= limit ${limit}`);
      assert.equal(used, sum('charged') + sum('reserved') - sum('refunded'), 'every unit accounted for');
      assert.ok(sum('denied') > 0, 'the limit was reached under contention');
      assert.ok(sum('refundDenied') > 0, 'over-refunds were attempted and refused');
      const rows = await f.database.db.selectFrom('quota_reservations').select(['units', 'refunded']).where('account_id', '=', id).execute();
      assert.equal(rows.reduce((n, r) => n + r.units, 0), sum('reserved'));
      assert.equal(rows.reduce((n, r) => n + r.refunded, 0), sum('refunded'));
      assert.ok(rows.every((r) => r.refunded <= r.units));
    });
  });
}
