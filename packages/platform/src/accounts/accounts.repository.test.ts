import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDatabaseUrl } from '../config/settings.js';
import { CORE_MIGRATIONS } from '../db/core-migrations.js';
import type { CoreTables } from '../db/core-schema.js';
import { migrate, openDatabase, type Database } from '../db/database.js';
import { createTestDatabase, testBackends } from '../testing/test-database.js';
import { AccountsRepository } from './accounts.repository.js';
import { hashApiKey } from './api-keys.js';
import { KeyUsageRecorder } from './key-usage-recorder.js';

for (const backend of testBackends()) {
  describe(`accounts and API keys on ${backend}`, () => {
    let drop: () => Promise<void>;
    let database: Database<CoreTables>;
    let repo: AccountsRepository;

    before(async () => {
      const created = await createTestDatabase(backend);
      drop = created.drop;
      database = openDatabase<CoreTables>(parseDatabaseUrl(created.url, process.cwd()));
      await migrate(database.db as never, CORE_MIGRATIONS);
      repo = new AccountsRepository(database, 'ev_live_');
    });
    after(async () => {
      await database.close();
      await drop();
    });

    test('a new account gets a key of the documented shape, stored only as a hash', async () => {
      const r = await repo.createAccount({ email: '  Alice@Example.TEST ', plan: 'free' });
      assert.ok(r.ok);
      assert.equal(r.account.email, 'alice@example.test');
      assert.match(r.account.id, /^acct_[0-9a-z]{26}$/);
      assert.match(r.apiKey, /^ev_live_[0-9A-Za-z]{32}$/);
      assert.match(r.key.id, /^key_[0-9a-z]{26}$/);
      assert.equal(r.key.key_preview, `ev_live_…${r.apiKey.slice(-4)}`);
      const rows = await database.db.selectFrom('api_keys').selectAll().execute();
      const dump = JSON.stringify(rows);
      assert.ok(!dump.includes(r.apiKey.slice(8)), 'the key itself is nowhere in the table');
      assert.ok(rows.some((k) => k.key_hash === hashApiKey(r.apiKey)));
    });

    test('e-mail addresses are unique per service, case-insensitively', async () => {
      assert.ok((await repo.createAccount({ email: 'bob@example.test', plan: 'free' })).ok);
      assert.deepEqual(await repo.createAccount({ email: 'BOB@example.test', plan: 'free' }), { ok: false, reason: 'email_taken' });
    });

    test('keys resolve to their account until revoked; garbage and unknown keys do not', async () => {
      const r = await repo.createAccount({ email: 'carol@example.test', plan: 'starter' });
      assert.ok(r.ok);
      const second = await repo.createKey(r.account.id, 'ci');
      assert.ok(second);
      assert.deepEqual(await repo.findPrincipal(second.apiKey), { keyId: second.key.id, accountId: r.account.id, email: 'carol@example.test', plan: 'starter' });
      assert.equal(await repo.findPrincipal('ev_live_' + 'A'.repeat(32)), null);
      assert.equal(await repo.findPrincipal(second.apiKey.slice(0, -1)), null);
      assert.equal(await repo.findPrincipal(`cv_live_${second.apiKey.slice(8)}`), null);
      assert.equal(await repo.revokeKey(r.account.id, second.key.id), 'revoked');
      assert.equal(await repo.findPrincipal(second.apiKey), null, 'revocation is effective at once');
      assert.equal(await repo.revokeKey(r.account.id, second.key.id), 'not_found');
      assert.deepEqual((await repo.listKeys(r.account.id)).map((k) => k.id), [r.key.id]);
    });

    test('lookups of one key in the same turn agree; one asked after a revocation has committed is refused', async () => {
      const r = await repo.createAccount({ email: 'dave@example.test', plan: 'starter' });
      assert.ok(r.ok);
      const second = await repo.createKey(r.account.id, 'ci');
      assert.ok(second);
      const together = await Promise.all(Array.from({ length: 20 }, () => repo.findPrincipal(second.apiKey)));
      assert.deepEqual(new Set(together.map((p) => p?.keyId)), new Set([second.key.id]));
      together[0]!.plan = 'changed by a caller';
      assert.equal(together[1]!.plan, 'starter', 'each caller has its own copy');
      assert.equal(await repo.revokeKey(r.account.id, second.key.id), 'revoked');
      assert.equal(await repo.findPrincipal(second.apiKey), null);
      assert.deepEqual(await repo.findPrincipal(r.apiKey), { keyId: r.key.id, accountId: r.account.id, email: 'dave@example.test', plan: 'starter' });
    });

    test('the last active key cannot be revoked, and another account’s key is not found', async () => {
      const a = await repo.createAccount({ email: 'dan@example.test', plan: 'free' });
      const b = await repo.createAccount({ email: 'erin@example.test', plan: 'free' });
      assert.ok(a.ok && b.ok);
      assert.equal(await repo.revokeKey(a.account.id, a.key.id), 'last_key');
      assert.equal(await repo.revokeKey(a.account.id, b.key.id), 'not_found');
      assert.ok(await repo.findPrincipal(b.apiKey));
    });

    test('concurrent revocations of the last two keys leave one working key', async () => {
      const a = await repo.createAccount({ email: 'frank@example.test', plan: 'free' });
      assert.ok(a.ok);
      const k2 = await repo.createKey(a.account.id, 'two');
      assert.ok(k2);
      const results = await Promise.all([repo.revokeKey(a.account.id, a.key.id), repo.revokeKey(a.account.id, k2.key.id)]);
      assert.deepEqual([...results].sort(), ['last_key', 'revoked']);
      assert.equal((await repo.listKeys(a.account.id)).length, 1);
    });

    test('usage is buffered, then written as last_used and per-month request counts', async () => {
      const a = await repo.createAccount({ email: 'gina@example.test', plan: 'free' });
      assert.ok(a.ok);
      const recorder = new KeyUsageRecorder(database, 60_000, (err) => assert.fail(String(err)));
      const t1 = new Date('2026-11-30T23:59:00Z');
      recorder.record(a.key.id, t1);
      recorder.record(a.key.id, t1);
      recorder.record(a.key.id, new Date('2026-11-30T23:59:30Z'));
      assert.equal((await repo.keyUsage(a.account.id, '2026-11'))[0]?.requests_this_month, 0, 'nothing written before the flush');
      recorder.record(a.key.id, new Date('2026-12-01T00:00:10Z'));
      await recorder.close();
      const nov = await repo.keyUsage(a.account.id, '2026-11');
      const dec = await repo.keyUsage(a.account.id, '2026-12');
      assert.equal(nov[0]?.requests_this_month, 3);
      assert.equal(dec[0]?.requests_this_month, 1);
      assert.equal(dec[0]?.last_used, '2026-12-01T00:00:10.000Z');
    });

    test('plans change and accounts list in creation order', async () => {
      const a = await repo.createAccount({ email: 'hal@example.test', plan: 'free' });
      assert.ok(a.ok);
      assert.equal(await repo.setPlan(a.account.id, 'scale'), true);
      assert.equal((await repo.getAccount(a.account.id))?.plan, 'scale');
      assert.equal(await repo.setPlan('acct_missing', 'scale'), false);
      const list = await repo.listAccounts();
      assert.equal(list.at(-1)?.email, 'hal@example.test');
      assert.equal(await repo.countAccounts(), list.length);
    });
  });
}
