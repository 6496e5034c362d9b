import type { Migration } from 'kysely';
import { AccountsRepository } from '../accounts/accounts.repository.js';
import { KeyUsageRecorder } from '../accounts/key-usage-recorder.js';
import type { DatabaseTarget } from '../config/settings.js';
import { CORE_MIGRATIONS } from '../db/core-migrations.js';
import type { CoreTables } from '../db/core-schema.js';
import { migrate, openDatabase, type Database } from '../db/database.js';
import { DashboardSessionsRepository } from '../dashboard/sessions.repository.js';
import { SIGN_IN_WINDOW_MS, SIGN_UPS_PER_ADDRESS, SignInThrottle } from '../dashboard/sign-in-throttle.js';
import { ChargeBatcher } from '../quota/charge-batcher.js';
import { QuotaLedger } from '../quota/quota-ledger.js';

/** The parts of a service that live beside its database: accounts, keys, quota. */
export interface ServiceCore<DB extends CoreTables> {
  database: Database<DB>;
  /** The same database, typed for the core tables only. */
  coreDatabase: Database<CoreTables>;
  accounts: AccountsRepository;
  quota: QuotaLedger;
  /** The ledger's charges, coalesced per event-loop turn: for the request path. */
  charges: ChargeBatcher;
  keyUsage: KeyUsageRecorder;
  /** Dashboard sessions (cookie sign-in) and the failed sign-in throttle. */
  sessions: DashboardSessionsRepository;
  signInThrottle: SignInThrottle;
  /** Open sign-ups per client address. */
  signUpThrottle: SignInThrottle;
  /** Flushes buffered usage and closes the database. */
  close(): Promise<void>;
}

export interface ServiceCoreOptions {
  database: DatabaseTarget;
  /** The service's own migrations; the core ones are added. */
  migrations: Record<string, Migration>;
  keyPrefix: string;
  keyUsageFlushMs?: number;
  onBackgroundError?: (err: unknown) => void;
}

/** Opens the service's database, applies pending migrations and builds the core repositories. */
export async function openServiceCore<DB extends CoreTables>(options: ServiceCoreOptions): Promise<ServiceCore<DB>> {
  const database = openDatabase<DB>(options.database);
  try {
    await migrate(database.db as never, { ...CORE_MIGRATIONS, ...options.migrations });
  } catch (err) {
    await database.close();
    throw err;
  }
  const coreDatabase = database as unknown as Database<CoreTables>;
  const keyUsage = new KeyUsageRecorder(coreDatabase, options.keyUsageFlushMs ?? 1000, options.onBackgroundError ?? (() => undefined));
  let closed = false;
  const quota = new QuotaLedger(coreDatabase);
  return {
    database,
    coreDatabase,
    accounts: new AccountsRepository(coreDatabase, options.keyPrefix),
    quota,
    charges: new ChargeBatcher(quota),
    keyUsage,
    sessions: new DashboardSessionsRepository(coreDatabase),
    signInThrottle: new SignInThrottle(coreDatabase),
    signUpThrottle: new SignInThrottle(coreDatabase, { maxFailures: SIGN_UPS_PER_ADDRESS, windowMs: SIGN_IN_WINDOW_MS }),
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await keyUsage.close();
      } finally {
        await database.close();
      }
    },
  };
}
