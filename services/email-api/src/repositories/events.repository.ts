import type { Kysely } from 'kysely';
import { newId, type Database } from '@mailconv/platform';
import type { EmailTables } from '../db/schema.js';

/** The webhook outbox: events recorded for delivery. */
export class EventsRepository {
  constructor(private readonly database: Database<EmailTables>) {}

  /**
   * Records `payload` (serialised once, so every delivery sends the same bytes). Pass the
   * transaction of the state change that causes the event, so both commit or neither does.
   */
  async record(accountId: string, type: string, payload: Record<string, unknown>, now: Date, exec?: Kysely<EmailTables>): Promise<string> {
    const id = newId('evt', now.getTime());
    await (exec ?? this.database.db).insertInto('events').values({ id, account_id: accountId, type, payload: JSON.stringify(payload), created_at: now.toISOString() }).execute();
    return id;
  }

  async list(accountId: string): Promise<Array<{ id: string; type: string; payload: string; created_at: string }>> {
    return this.database.db.selectFrom('events').select(['id', 'type', 'payload', 'created_at']).where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
  }
}
