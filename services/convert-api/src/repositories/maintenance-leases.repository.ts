import type { Database } from '@mailconv/platform';
import type { ConvertTables } from '../db/schema.js';

/** Leases on work that must run in one process at a time (the retention sweeper), shared through the database. */
export class MaintenanceLeasesRepository {
  constructor(private readonly database: Database<ConvertTables>) {}

  /**
   * Takes or extends the lease `name` for `owner` until `now + ms`; false while another
   * owner holds it unexpired.
   */
  async hold(name: string, owner: string, now: Date, ms: number): Promise<boolean> {
    const nowIso = now.toISOString();
    return this.database.writeTransaction(async (trx) => {
      await trx.insertInto('maintenance_leases').values({ name, owner: '', lease_until: '' }).onConflict((oc) => oc.column('name').doNothing()).execute();
      const r = await trx
        .updateTable('maintenance_leases')
        .set({ owner, lease_until: new Date(now.getTime() + ms).toISOString() })
        .where('name', '=', name)
        .where((eb) => eb.or([eb('owner', '=', owner), eb('lease_until', '<', nowIso)]))
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    });
  }
}
