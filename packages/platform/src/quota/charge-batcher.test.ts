import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountsRepository } from '../accounts/accounts.repository.js';
import { parseDatabaseUrl } from '../config/settings.js';
import { CORE_MIGRATIONS } from '../db/core-migrations.js';
import type { CoreTables } from '../db/core-schema.js';
import { migrate, openDatabase, type Database } from '../db/database.js';
import { createTestDatabase, testBackends } from '../testing/test-database.js';
import { ChargeBatcher } from './charge-batcher.js';
import { QuotaLedger } from './quota-ledger.js';

const NOV = new Date('2026-11-15T12:00:00Z');

for (const backend of testBackends()) {
  describe(`coalesced quota charges on ${backend}`, () => {
    let drop: () => Promise<void>;
    let database: Database<CoreTables>;
    let ledger: QuotaLedger;
    let accounts: AccountsRepository;

    before(async () => {
      let url: string;
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

    test('charges of one turn that fit share one statement, each told the used it would have seen in arrival order', async () => {
      const id = await account('together@x.test');
      const other = await account('other@x.test');
      const charges = new ChargeBatcher(ledger);
      const results = await Promise.all([...Array.from({ length: 30 }, (_, i) => charges.charge(id, 1 + (i % 3), 100, NOV)), charges.charge(other, 7, 100, NOV)]);
      assert.deepEqual(charges.stats, { calls: 31, statements: 2 }, 'one statement per account');
      let used = 0;
      for (const [i, r] of results.slice(0, 30).entries()) {
        used += 1 + (i % 3);
        assert.deepEqual(r, { ok: true, period: '2026-11', limit: 100, used, remaining: 100 - used });
      }
      assert.deepEqual(results[30], { ok: true, period: '2026-11', limit: 100, used: 7, remaining: 93 });
      assert.equal(await ledger.used(id, NOV), 60);
    });

    test('when the sum does not fit, the calls are charged one by one in arrival order: nothing over the limit, nothing lost', async () => {
      const id = await account('crowd@x.test');
      const charges = new ChargeBatcher(ledger);
      assert.equal((await charges.charge(id, 30, 100, NOV)).ok, true);
      const results = await Promise.all(Array.from({ length: 60 }, () => charges.charge(id, 2, 100, NOV)));
      assert.deepEqual(
        results.map((r) => r.ok),
        Array.from({ length: 60 }, (_, i) => i < 35),
        'the first 35 in arrival order fit',
      );
      assert.deepEqual(results[34], { ok: true, period: '2026-11', limit: 100, used: 100, remaining: 0 });
      assert.deepEqual(results[35], { ok: false, required: 2, period: '2026-11', limit: 100, used: 100, remaining: 0 });
      assert.equal(await ledger.used(id, NOV), 100);
    });

    test('two batchers (two processes) charging one account at once never exceed the limit', async () => {
      const id = await account('two@x.test');
      const a = new ChargeBatcher(ledger);
      const b = new ChargeBatcher(ledger);
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).charge(id, 1 + (i % 5), 250, NOV)));
      const charged = results.reduce((sum, r, i) => sum + (r.ok ? 1 + (i % 5) : 0), 0);
      assert.equal(await ledger.used(id, NOV), charged, 'used is exactly what was granted');
      assert.ok(charged <= 250 && charged >= 245, `charged ${charged}`);
    });

    test('bad units are refused before anything is charged', async () => {
      const id = await account('bad@x.test');
      const charges = new ChargeBatcher(ledger);
      await assert.rejects(charges.charge(id, -1, 100, NOV), RangeError);
      await assert.rejects(charges.charge(id, 0.5, 100, NOV), RangeError);
      assert.equal(await ledger.used(id, NOV), 0);
    });
  });
}
