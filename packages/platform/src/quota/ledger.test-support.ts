import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { AccountsRepository } from '../accounts/accounts.repository.js';
import { parseDatabaseUrl } from '../config/settings.js';
import { CORE_MIGRATIONS } from '../db/core-migrations.js';
import type { CoreTables } from '../db/core-schema.js';
import { migrate, openDatabase, type Database } from '../db/database.js';
import { createTestDatabase, type Backend } from '../testing/test-database.js';
import { QuotaLedger } from './quota-ledger.js';

/** What the quota suites share; filled in by the `before` hook of the enclosing block. */
export interface LedgerFixture {
  url: string;
  database: Database<CoreTables>;
  ledger: QuotaLedger;
  accounts: AccountsRepository;
  /** Creates an account on the free plan and returns its id. */
  account(email: string): Promise<string>;
}

/** A fresh migrated core database on `backend` for the enclosing describe block, dropped after it. */
export function useLedgerDatabase(backend: Backend): LedgerFixture {
  let drop: () => Promise<void> = async () => undefined;
  const fixture = {
    async account(email: string): Promise<string> {
      const r = await fixture.accounts.createAccount({ email, plan: 'free' });
      assert.ok(r.ok);
      return r.account.id;
    },
  } as LedgerFixture;
  before(async () => {
    const created = await createTestDatabase(backend);
    drop = created.drop;
    fixture.url = created.url;
    fixture.database = openDatabase<CoreTables>(parseDatabaseUrl(created.url, process.cwd()));
    await migrate(fixture.database.db as never, CORE_MIGRATIONS);
    fixture.ledger = new QuotaLedger(fixture.database);
    fixture.accounts = new AccountsRepository(fixture.database, 'ev_live_');
  });
  after(async () => {
    await fixture.database.close();
    await drop();
  });
  return fixture;
}
