import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AccountsRepository } from '../accounts/accounts.repository.js';
import { parseDatabaseUrl } from '../config/settings.js';
import { CORE_MIGRATIONS } from '../db/core-migrations.js';
import type { CoreTables } from '../db/core-schema.js';
import { migrate, openDatabase, type Database } from '../db/database.js';
import { createTestDatabase, testBackends } from '../testing/test-database.js';
import { QuotaLedger } from './quota-ledger.js';

const run = promisify(execFile);
const HAMMER = fileURLToPath(new URL('../testing/quota-hammer.js', import.meta.url));
const NOV = new Date('2026-11-15T12:00:00Z');
const DEC = new Date('2026-12-01T00:00:00Z');

for (const backend of testBackends()) {
  describe(`quota ledger on ${backend}`, () => {
    let url: string;
    let drop: () => Promise<void>;
    let database: Database<CoreTables>;
    let ledger: QuotaLedger;
    let accounts: AccountsRepository;

    before(async () => {
      ({ url, drop } = await createTestDatabase(backend));
      database = openDatabase<CoreTables>(parseDatabaseUrl(url, process.cwd()));
      await migrate(database.db as never, CORE_MIGRATIONS);
      ledger = new QuotaLedger(database);
      accounts = new AccountsRepository(database, 'ev_live_');
    });
    after(async () => {
      await database.close();
      await drop();
    });

    async function account(email: string): Promise<string> {
      const r = await accounts.createAccount({ email, plan: 'free' });
      assert.ok(r.ok);
      return r.account.id;
    }

    test('charges fit under the limit; the charge that would cross it is refused whole', async () => {
      const id = await account('charge@x.test');
      assert.deepEqual(await ledger.charge(id, 60, 100, NOV), { ok: true, period: '2026-11', limit: 100, used: 60, remaining: 40 });
      assert.deepEqual(await ledger.charge(id, 41, 100, NOV), { ok: false, required: 41, period: '2026-11', limit: 100, used: 60, remaining: 40 });
      assert.equal((await ledger.charge(id, 40, 100, NOV)).ok, true);
      assert.equal((await ledger.charge(id, 1, 100, NOV)).ok, false);
      assert.equal((await ledger.charge(id, 0, 100, NOV)).ok, true);
      assert.equal(await ledger.used(id, NOV), 100);
      await assert.rejects(ledger.charge(id, -1, 100, NOV), RangeError);
      await assert.rejects(ledger.charge(id, 1.5, 100, NOV), RangeError);
    });

    test('a new calendar month (UTC) starts from zero', async () => {
      const id = await account('months@x.test');
      assert.equal((await ledger.charge(id, 100, 100, new Date('2026-11-30T23:59:59.999Z'))).ok, true);
      assert.deepEqual(await ledger.charge(id, 5, 100, DEC), { ok: true, period: '2026-12', limit: 100, used: 5, remaining: 95 });
      assert.equal(await ledger.used(id, NOV), 100);
    });

    test('reservations count at once and refunds never exceed them, even when retried', async () => {
      const id = await account('reserve@x.test');
      const r = await ledger.reserve(id, 50, 100, NOV);
      assert.ok(r.ok);
      assert.equal(r.used, 50);
      assert.equal((await ledger.reserve(id, 51, 100, NOV)).ok, false);
      assert.deepEqual(await ledger.refund(r.reservationId, 20), { ok: true, refunded: 20 });
      assert.deepEqual(await ledger.refund(r.reservationId, 31), { ok: false, reason: 'exceeds_reservation' });
      assert.deepEqual(await ledger.refund(r.reservationId, 30), { ok: true, refunded: 30 });
      assert.deepEqual(await ledger.refund(r.reservationId, 1), { ok: false, reason: 'exceeds_reservation' });
      assert.deepEqual(await ledger.refund('rsv_missing', 1), { ok: false, reason: 'not_found' });
      assert.equal(await ledger.used(id, NOV), 0);
    });

    test('a refund made next month goes back to the month that was charged', async () => {
      const id = await account('late-refund@x.test');
      const r = await ledger.reserve(id, 30, 100, NOV);
      assert.ok(r.ok);
      await ledger.charge(id, 7, 100, DEC);
      assert.deepEqual(await ledger.refund(r.reservationId, 10), { ok: true, refunded: 10 });
      assert.equal(await ledger.used(id, NOV), 20);
      assert.equal(await ledger.used(id, DEC), 7);
    });

    test('a plain charge can be given back, never below zero', async () => {
      const id = await account('uncharge@x.test');
      await ledger.charge(id, 10, 100, NOV);
      await ledger.refundCharge(id, '2026-11', 4);
      assert.equal(await ledger.used(id, NOV), 6);
      await ledger.refundCharge(id, '2026-11', 50);
      assert.equal(await ledger.used(id, NOV), 0);
    });

    test('a reservation inside a transaction that rolls back charges nothing', async () => {
      const id = await account('rollback@x.test');
      await assert.rejects(
        database.writeTransaction(async (trx) => {
          const r = await ledger.reserve(id, 40, 100, NOV, trx);
          assert.ok(r.ok);
          throw new Error('storing the job failed');
        }),
        /storing the job failed/,
      );
      assert.equal(await ledger.used(id, NOV), 0);
      const rows = await database.db.selectFrom('quota_reservations').selectAll().where('account_id', '=', id).execute();
      assert.equal(rows.length, 0);
    });

    test('concurrent charges over one connection pool never exceed the limit', async () => {
      const id = await account('pool@x.test');
      const results = await Promise.all(Array.from({ length: 300 }, () => ledger.charge(id, 7, 1000)));
      assert.equal(results.filter((r) => r.ok).length, 142);
      assert.equal(await ledger.used(id), 994);
    });

    test('several processes charging, reserving and refunding at once: never over the limit, no unit lost', async () => {
      const id = await account('hammer@x.test');
      const limit = 2000;
      const startAt = Date.now() + 1500;
      const processes = 4;
      const outputs = await Promise.all(
        Array.from({ length: processes }, (_, i) =>
          run(process.execPath, [HAMMER, JSON.stringify({ url, accountId: id, limit, ops: 160, seed: 1000 + i, startAt, parallel: backend === 'postgres' ? 4 : 1 })], { timeout: 120_000 }),
        ),
      );
      const totals = outputs.map((o) => JSON.parse(o.stdout) as { charged: number; reserved: number; refunded: number; denied: number; refundDenied: number });
      const sum = (k: keyof (typeof totals)[number]) => totals.reduce((n, t) => n + t[k], 0);
      const used = await ledger.used(id);
      assert.ok(used <= limit, `used ${used} <= limit ${limit}`);
      assert.equal(used, sum('charged') + sum('reserved') - sum('refunded'), 'every unit accounted for');
      assert.ok(sum('denied') > 0, 'the limit was reached under contention');
      assert.ok(sum('refundDenied') > 0, 'over-refunds were attempted and refused');
      const rows = await database.db.selectFrom('quota_reservations').select(['units', 'refunded']).where('account_id', '=', id).execute();
      assert.equal(rows.reduce((n, r) => n + r.units, 0), sum('reserved'));
      assert.equal(rows.reduce((n, r) => n + r.refunded, 0), sum('refunded'));
      assert.ok(rows.every((r) => r.refunded <= r.units));
    });
  });
}
