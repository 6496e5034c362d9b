import type { Kysely } from 'kysely';
import type { Database } from '@mailconv/platform';
import { isUniqueViolation } from '@mailconv/platform';
import type { EmailTables } from '../db/schema.js';

/** What to do with a request that carries an `Idempotency-Key`. */
export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

/**
 * Stored answers to requests made with an `Idempotency-Key`, per account, for a limited
 * time. The first request claims the key; a retry with the same key and the same request
 * gets the first answer back (and is charged nothing); the same key with a different
 * request is refused.
 */
export class IdempotencyRepository {
  constructor(private readonly database: Database<EmailTables>) {}

  async claim(accountId: string, key: string, requestHash: string, now: Date, ttlMs: number): Promise<IdempotencyClaim> {
    const db = this.database.db;
    // An expired answer no longer counts: the key may be used afresh.
    await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('expires_at', '<=', now.toISOString()).execute();
    try {
      await db
        .insertInto('idempotency_keys')
        .values({ account_id: accountId, key, request_hash: requestHash, state: 'pending', status_code: null, response_body: null, created_at: now.toISOString(), expires_at: new Date(now.getTime() + ttlMs).toISOString() })
        .execute();
      return { kind: 'claimed' };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const row = await db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
    if (!row) return this.claim(accountId, key, requestHash, now, ttlMs);
    if (row.request_hash !== requestHash) return { kind: 'mismatch' };
    if (row.state !== 'done' || row.response_body === null || row.status_code === null) return { kind: 'in_progress' };
    return { kind: 'replay', statusCode: row.status_code, body: row.response_body };
  }

  /** Stores the answer; pass `exec` to store it in the caller's transaction. */
  async complete(accountId: string, key: string, statusCode: number, body: string, exec: Kysely<EmailTables> = this.database.db): Promise<void> {
    await exec
      .updateTable('idempotency_keys')
      .set({ state: 'done', status_code: statusCode, response_body: body })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
  }

  /** Forgets a claim whose request failed, so that a retry can run it. */
  async release(accountId: string, key: string): Promise<void> {
    await this.database.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('state', '=', 'pending').execute();
  }
}
