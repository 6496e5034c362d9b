import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore, parseDatabaseUrl, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends } from '@mailconv/platform/testing';
import { CONVERT_KEY_PREFIX } from '../app.js';
import { CONVERT_MIGRATIONS } from '../db/migrations.js';
import type { ConvertTables } from '../db/schema.js';
import { ConversionsRepository, type ConversionRow } from './conversions.repository.js';
import { MaintenanceLeasesRepository } from './maintenance-leases.repository.js';
import { UploadsRepository } from './uploads.repository.js';

const T0 = new Date('2026-11-22T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const LEASE = 10_000;
const MAX = 2;

for (const backend of testBackends()) {
  describe(`conversion leases and claims (${backend})`, () => {
    let core: ServiceCore<ConvertTables>;
    let drop: () => Promise<void>;
    let repo: ConversionsRepository;
    let seq = 0;

    before(async () => {
      const db = await createTestDatabase(backend);
      drop = db.drop;
      core = await openServiceCore<ConvertTables>({ database: parseDatabaseUrl(db.url, process.cwd()), migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
      repo = new ConversionsRepository(core.database);
    });
    after(async () => {
      await core.close();
      await drop();
    });

    /** A fresh account with `n` queued conversions (oldest first), each limited to `limit` running at once. */
    async function account(n: number, limit: number): Promise<{ id: string; conversions: string[] }> {
      const created = await core.accounts.createAccount({ email: `a${++seq}@example.test`, plan: 'api' });
      assert.ok(created.ok);
      const accountId = created.account.id;
      const uploadId = `upl_${seq}`;
      await new UploadsRepository(core.database).insert({
        id: uploadId, account_id: accountId, filename: 'a.png', format: 'png', mime_type: 'image/png', size_bytes: 1, sha256: 'x',
        created_at: T0.toISOString(), expires_at: at(86_400_000).toISOString(), deleted_at: null, source_url: null,
      });
      const conversions: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = `cnv_${String(seq).padStart(3, '0')}_${i}`;
        const row: ConversionRow = {
          id, account_id: accountId, upload_id: uploadId, status: 'queued', target_format: 'jpg', options: '{}', output: null, output_path: null,
          download_token: `dl_${id}`, token_hash: `h_${id}`, error: null, quota_period: '2026-11', created_at: at(seq * 1000 + i).toISOString(),
          started_at: null, completed_at: null, expires_at: at(86_400_000).toISOString(), lease_owner: null, lease_until: null, attempts: 0, account_limit: limit, webhook_url: null, units: 1, export: null, export_credentials: null,
        };
        await repo.insert(row);
        conversions.push(id);
      }
      return { id: accountId, conversions };
    }

    const done = (status: 'completed' | 'failed' = 'completed') => ({ status, output: null, output_path: null, error: null, completed_at: T0.toISOString(), expires_at: at(86_400_000).toISOString() });

    /** Claims until nothing is claimable; the ids claimed, in order. */
    async function drain(owner: string, now: Date): Promise<string[]> {
      const ids: string[] = [];
      for (let row = await repo.claim(owner, now, LEASE, MAX); row; row = await repo.claim(owner, now, LEASE, MAX)) ids.push(row.id);
      return ids;
    }

    test('claims take the oldest work, hold each account to its limit across owners, and an account at its limit does not block others', async () => {
      const a = await account(3, 1);
      const b = await account(2, 2);
      const first = await repo.claim('p1:1', T0, LEASE, MAX);
      assert.equal(first?.id, a.conversions[0]);
      assert.equal(first?.status, 'processing');
      assert.equal(first?.attempts, 1);
      // Another process: a is at its limit (1), so it gets b's work, both of b's (limit 2), then nothing.
      assert.deepEqual(await drain('p2', T0), b.conversions);
      assert.equal(await repo.claim('p2:x', T0, LEASE, MAX, a.conversions[1]), null, 'a named conversion of an account at its limit is not claimed either');
      assert.ok(await repo.finish(a.conversions[0]!, 'p1:1', done()));
      const next = await repo.claim('p2:y', T0, LEASE, MAX, a.conversions[1]);
      assert.equal(next?.id, a.conversions[1], 'the slot freed: the named conversion is claimed');
      assert.equal((await repo.nextQueued(a.id))?.id, a.conversions[2]);
    });

    test('claims made at the same moment by many processes never run more than the account allows', async () => {
      const c = await account(12, 3);
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => repo.claim(`race:${i}`, T0, LEASE, MAX)));
      const claimed = results.filter((r): r is ConversionRow => r !== null);
      assert.equal(claimed.length, 3, `claimed ${claimed.map((r) => r.id).join(', ')}`);
      assert.equal(new Set(claimed.map((r) => r.id)).size, 3, 'each conversion claimed once');
      const running = await core.database.db.selectFrom('conversions').select('id').where('account_id', '=', c.id).where('status', '=', 'processing').execute();
      assert.equal(running.length, 3);
    });

    test('a live lease is never taken; an expired one is, once more; the old holder can neither renew nor finish', async () => {
      const d = await account(1, 1);
      const id = d.conversions[0]!;
      assert.equal((await repo.claim('p1:1', T0, LEASE, MAX, id))?.attempts, 1);
      assert.ok(await repo.renew(id, 'p1:1', at(LEASE)), 'the holder renews');
      assert.equal(await repo.claim('p2:1', at(LEASE - 1), LEASE, MAX, id), null, 'renewed lease still live');
      // The holder dies: nothing renews the lease.
      const retried = await repo.claim('p2:1', at(LEASE + 1), LEASE, MAX, id);
      assert.equal(retried?.attempts, 2);
      assert.equal(retried?.lease_owner, 'p2:1');
      assert.equal(await repo.renew(id, 'p1:1', at(2 * LEASE)), false, 'the old holder lost it');
      assert.equal(await repo.finish(id, 'p1:1', done()), false, 'a stale holder writes nothing');
      assert.ok(await repo.finish(id, 'p2:1', done()));
      assert.equal((await repo.state(id))?.status, 'completed');
    });

    test('a conversion whose process died on its last attempt is failed, not claimed again', async () => {
      const e = await account(1, 1);
      const id = e.conversions[0]!;
      await repo.claim('p1:1', T0, LEASE, MAX, id);
      await repo.claim('p2:1', at(LEASE + 1), LEASE, MAX, id);
      assert.deepEqual(await repo.failAbandoned(at(2 * LEASE), MAX, { error: '{}', expires_at: at(86_400_000).toISOString() }), [], 'lease still live');
      assert.equal(await repo.claim('p3:1', at(2 * LEASE + 2), LEASE, MAX, id), null, 'two attempts used');
      const failed = await repo.failAbandoned(at(2 * LEASE + 2), MAX, { error: '{"code":"internal_error"}', expires_at: at(86_400_000).toISOString() });
      assert.deepEqual(failed.map((r) => r.id), [id]);
      const state = await repo.state(id);
      assert.equal(state?.status, 'failed');
      assert.equal(state?.lease_owner, null);
      assert.deepEqual(await repo.failAbandoned(at(2 * LEASE + 3), MAX, { error: '{}', expires_at: T0.toISOString() }), [], 'once');
    });

    test('a conversion handed back at shutdown is queued again at once, its attempt not counted', async () => {
      const f = await account(1, 1);
      const id = f.conversions[0]!;
      await repo.claim('p1:1', T0, LEASE, MAX, id);
      assert.equal(await repo.release(id, 'p2:9'), false, 'only the holder hands it back');
      assert.ok(await repo.release(id, 'p1:1'));
      const again = await repo.claim('p2:1', at(1), LEASE, MAX, id);
      assert.equal(again?.attempts, 1);
    });

    test('a shred ends the lease: the holder cannot renew or finish, and lets go', async () => {
      const g = await account(1, 1);
      const id = g.conversions[0]!;
      await repo.claim('p1:1', T0, LEASE, MAX, id);
      const previous = await repo.close(id, 'shredded', T0);
      assert.equal(previous?.status, 'processing');
      assert.equal(previous?.lease_owner, 'p1:1');
      assert.equal(await repo.renew(id, 'p1:1', at(LEASE)), false);
      assert.equal(await repo.finish(id, 'p1:1', done()), false);
      await repo.dropLease(id, 'p1:1');
      assert.deepEqual(await repo.state(id), { status: 'shredded', lease_owner: null, lease_until: null });
      assert.equal(await repo.claim('p2:1', at(2 * LEASE), LEASE, MAX, id), null);
    });

    test('maintenance lease: one holder at a time; it passes on when the holder stops renewing', async () => {
      const leases = new MaintenanceLeasesRepository(core.database);
      assert.ok(await leases.hold('sweep', 'A', T0, 1000));
      assert.equal(await leases.hold('sweep', 'B', at(500), 1000), false);
      assert.ok(await leases.hold('sweep', 'A', at(900), 1000), 'the holder renews');
      assert.equal(await leases.hold('sweep', 'B', at(1800), 1000), false);
      assert.ok(await leases.hold('sweep', 'B', at(2000), 1000), 'expired: B takes it');
      assert.equal(await leases.hold('sweep', 'A', at(2100), 1000), false);
      const both = await Promise.all([leases.hold('other', 'A', T0, 1000), leases.hold('other', 'B', T0, 1000)]);
      assert.deepEqual(both.filter(Boolean).length, 1, 'two at once: one wins');
    });
  });
}
