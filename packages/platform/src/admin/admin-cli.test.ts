import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planCatalog } from '../accounts/plans.js';
import { parseDatabaseUrl } from '../config/settings.js';
import { verifyPassword } from '../dashboard/passwords.js';
import { openServiceCore, type ServiceCore } from '../service/service-core.js';
import { createTestDatabase, testBackends } from '../testing/test-database.js';
import { runAdminCli, type AdminTarget } from './admin-cli.js';

const PLANS = planCatalog({ free: { id: 'free', name: 'Free', monthlyQuota: 10, rateLimitRpm: 10 } }, 'free', 'free');

for (const backend of testBackends()) {
  describe(`admin CLI set-password on ${backend}`, () => {
    let core: ServiceCore<never>;
    let drop: () => Promise<void>;
    let target: AdminTarget;
    before(async () => {
      const db = await createTestDatabase(backend);
      drop = db.drop;
      core = await openServiceCore({ database: parseDatabaseUrl(db.url, process.cwd()), migrations: {}, keyPrefix: 'tk_live_' });
      target = { service: 'test', open: async () => ({ accounts: core.accounts, plans: PLANS, close: async () => undefined }) };
    });
    after(async () => {
      await core.close();
      await drop();
    });

    /** Runs one command with `secret` as what standard input gives; returns exit code and output. */
    const run = async (argv: string[], secret?: string) => {
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), ...(secret !== undefined ? { readSecret: async () => secret } : {}) };
      return { code: await runAdminCli(argv, target, io), out: out.join('\n'), err: err.join('\n') };
    };

    test('sets the password from standard input (never argv); it verifies; a new one replaces it and ends sessions', async () => {
      const r = await core.accounts.createAccount({ email: 'op@example.test', plan: 'free' });
      assert.ok(r.ok);
      const set = await run(['set-password', '--email', 'op@example.test', '--password-stdin', '--json'], 'first password');
      assert.equal(set.code, 0, set.err);
      assert.deepEqual(JSON.parse(set.out), { account_id: r.account.id, email: 'op@example.test', password_set: true });
      const stored = (await core.accounts.findCredentials('op@example.test'))!.passwordHash!;
      assert.ok(!set.out.includes('first password') && !stored.includes('first password'));
      assert.equal(await verifyPassword('first password', stored), true);
      await core.sessions.create(r.account.id, new Date());
      assert.equal((await run(['set-password', '--account', r.account.id], 'second password')).code, 0);
      const again = (await core.accounts.findCredentials('op@example.test'))!.passwordHash!;
      assert.equal(await verifyPassword('first password', again), false);
      assert.equal(await verifyPassword('second password', again), true);
      const left = await core.coreDatabase.db.selectFrom('dashboard_sessions').select('id_hash').where('account_id', '=', r.account.id).execute();
      assert.deepEqual(left, [], 'sessions of the old password are gone');
    });

    test('refusals: too short (1), unknown account (1), no account given (2), a --password option (2)', async () => {
      assert.equal((await run(['set-password', '--email', 'op@example.test'], 'short')).code, 1);
      assert.equal((await run(['set-password', '--email', 'ghost@example.test'], 'long enough pw')).code, 1);
      assert.equal((await run(['set-password'], 'long enough pw')).code, 2);
      const argv = await run(['set-password', '--email', 'op@example.test', '--password', 'long enough pw'], 'long enough pw');
      assert.equal(argv.code, 2, 'the password is never taken from the command line');
    });
  });
}
