// A dead holder's maintenance lease is taken at once, a live one's never (issue 45): the
// holder's name tells a process of the same machine whether the holder still runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openServiceCore, parseDatabaseUrl, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends } from '@mailconv/platform/testing';
import { CONVERT_KEY_PREFIX } from './app.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import type { ConvertTables } from './db/schema.js';
import { holderIsGone, leaseHolderId } from './lease-holder.js';
import { MaintenanceLeasesRepository } from './repositories/maintenance-leases.repository.js';

/** This process's holder name with some of its fields changed. */
function holderWith(change: Record<string, unknown>): string {
  return JSON.stringify({ ...(JSON.parse(leaseHolderId()) as Record<string, unknown>), ...change });
}

/** Above the largest pid Linux hands out (2^22): no such process, ever. */
const NO_SUCH_PID = 4_194_305;

test('a holder is known dead only on this machine and PID namespace, when its process is gone or its pid reused', () => {
  const mine = leaseHolderId();
  assert.notEqual(mine, leaseHolderId(), 'two lease users of one process have names of their own');
  assert.equal(holderIsGone(mine), false, 'this very process runs');
  assert.equal(holderIsGone(holderWith({ pid: NO_SUCH_PID })), true, 'its process is gone');
  assert.equal(holderIsGone(holderWith({ start: '1' })), true, 'its pid now belongs to a process started at another time');
  assert.equal(holderIsGone(holderWith({ pid: NO_SUCH_PID, boot: randomUUID() })), false, 'another machine (or boot): never judged');
  assert.equal(holderIsGone(holderWith({ pid: NO_SUCH_PID, pidns: 'pid:[1]' })), false, 'another PID namespace (container): never judged');
  assert.equal(holderIsGone(randomUUID()), false, 'a holder name of an older version: never judged');
  assert.equal(holderIsGone(''), false);
});

for (const backend of testBackends()) {
  describe(`maintenance leases with dead holders (${backend})`, () => {
    let core: ServiceCore<ConvertTables>;
    let drop: () => Promise<void>;
    before(async () => {
      const db = await createTestDatabase(backend);
      drop = db.drop;
      core = await openServiceCore<ConvertTables>({ database: parseDatabaseUrl(db.url, process.cwd()), migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
    });
    after(async () => {
      await core.close();
      await drop();
    });

    test('a live holder keeps its lease; a dead one\'s is taken before it runs out, by one process only', async () => {
      const leases = new MaintenanceLeasesRepository(core.database);
      const t0 = new Date();
      const live = leaseHolderId();
      const next = leaseHolderId();
      assert.ok(await leases.hold('sweep', live, t0, 610_000, holderIsGone));
      assert.equal(await leases.hold('sweep', next, t0, 10_000, holderIsGone), false, 'the holder runs: its lease stands');
      const dead = holderWith({ pid: NO_SUCH_PID });
      assert.ok(await leases.hold('other', dead, t0, 610_000, holderIsGone));
      assert.equal(await leases.hold('other', next, t0, 10_000), false, 'without the check, the lease waits for its end');
      assert.ok(await leases.hold('other', next, t0, 10_000, holderIsGone), 'the holder is gone: taken at once');
      assert.equal(await leases.hold('other', live, t0, 10_000, holderIsGone), false, 'and the new holder keeps it');
      assert.ok(await leases.hold('third', dead, t0, 610_000, holderIsGone));
      const both = await Promise.all([leases.hold('third', live, t0, 10_000, holderIsGone), leases.hold('third', next, t0, 10_000, holderIsGone)]);
      assert.equal(both.filter(Boolean).length, 1, 'two at once: one takes it');
    });
  });
}
