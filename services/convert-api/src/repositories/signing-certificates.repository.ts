import type { Database } from '@mailconv/platform';
import type { Selectable } from 'kysely';
import type { ConvertTables, SigningCertificatesTable } from '../db/schema.js';

export type SigningCertificateRow = Selectable<SigningCertificatesTable>;

/** Accounts' signing certificates (issue 25); every read and delete is scoped to one account. */
export class SigningCertificatesRepository {
  constructor(private readonly database: Database<ConvertTables>) {}

  async insert(row: SigningCertificateRow): Promise<void> {
    await this.database.db.insertInto('signing_certificates').values(row).execute();
  }

  /** The account's certificates, newest first. */
  async list(accountId: string): Promise<SigningCertificateRow[]> {
    return this.database.db.selectFrom('signing_certificates').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  }

  /** One of the account's certificates; undefined for another account's id or none. */
  async find(accountId: string, id: string): Promise<SigningCertificateRow | undefined> {
    return this.database.db.selectFrom('signing_certificates').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  /** Deletes one of the account's certificates; whether there was one. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const r = await this.database.db.deleteFrom('signing_certificates').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
