import type { Database } from '@mailconv/platform';
import type { ConvertTables } from '../db/schema.js';

/** Leases on work that must run in one process at a time (the retention sweeper), shared through the database. */
export class MaintenanceLeasesRepository {
  constructor(private readonly database: Database<ConvertTables>) {}

  /**
   * Takes or extends the lease `name` for `owner` until `now + ms`; false while another
   * owner holds it unexpired, unless `holderIsGone` says that owner is dead (a process of
   * this machine that was killed: issue 45), whose lease is then taken at once.
   */
  async hold(name: string, owner: string, now: Date, ms: number, holderIsGone: (holder: string) => boolean = () => false): Promise<boolean> {
    const nowIso = now.toISOString();
    return this.database.writeTransaction(async (trx) => {
      await trx.insertInto('maintenance_leases').values({ name, owner: '', lease_until: '' }).onConflict((oc) => oc.column('name').doNothing()).execute();
      const current = await trx.selectFrom('maintenance_leases').select(['owner', 'lease_until']).where('name', '=', name).executeTakeFirst();
      // Only the very holder seen dead is replaced: should another process have taken the
      // lease meanwhile, the update finds no row.
      const dead = current && current.owner !== owner && current.owner !== '' && current.lease_until >= nowIso && holderIsGone(current.owner) ? current.owner : null;
      const r = await trx
        .updateTable('maintenance_leases')
        .set({ owner, lease_until: new Date(now.getTime() + ms).toISOString() })
        .where('name', '=', name)
        .where((eb) => eb.or([eb('owner', '=', owner), eb('lease_until', '<', nowIso), ...(dead ? [eb('owner', '=', dead)] : [])]))
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    });
  }
}
