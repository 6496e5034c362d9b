import type { Kysely } from 'kysely';
import type { CoreTables } from '../db/core-schema.js';
import type { Database } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { reusableQuery } from '../db/reusable-query.js';
import { TurnBatcher } from '../batching/turn-batcher.js';
import { newId } from '../ids.js';
import { generateApiKey, hashApiKey, looksLikeApiKey, previewApiKey } from './api-keys.js';

export interface AccountRecord {
  id: string;
  email: string;
  plan: string;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  key_preview: string;
  created_at: string;
  last_used: string | null;
}

/** Who is calling: resolved from an API key or a dashboard session on every request. */
export interface Principal {
  /** The API key used; null when the caller signed in to the dashboard (a session has no key). */
  keyId: string | null;
  accountId: string;
  email: string;
  plan: string;
}

export type CreateAccountResult = { ok: true; account: AccountRecord; apiKey: string; key: ApiKeyRecord } | { ok: false; reason: 'email_taken' };
export type RevokeResult = 'revoked' | 'not_found' | 'last_key';

/** Accounts and their API keys. Keys are returned in full only by the call that creates them. */
export class AccountsRepository {
  private readonly principalQuery = reusableQuery(
    ({ hash }: { hash: string }) =>
      this.database.db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select(['api_keys.id as keyId', 'accounts.id as accountId', 'accounts.email as email', 'accounts.plan as plan'])
        .where('api_keys.key_hash', '=', hash)
        .where('api_keys.revoked_at', 'is', null),
    { hash: '\u0000hash' },
  );

  constructor(
    private readonly database: Database<CoreTables>,
    /** Key prefix of the service, e.g. `ev_live_`. */
    readonly keyPrefix: string,
  ) {}

  /** Creates an account with a first key named `keyName`. */
  async createAccount(input: { email: string; plan: string; keyName?: string }, now = new Date()): Promise<CreateAccountResult> {
    const email = input.email.trim().toLowerCase();
    try {
      return await this.database.writeTransaction(async (trx) => {
        const taken = await trx.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirst();
        if (taken) return { ok: false as const, reason: 'email_taken' as const };
        const account: AccountRecord = { id: newId('acct', now.getTime()), email, plan: input.plan, created_at: now.toISOString() };
        await trx.insertInto('accounts').values(account).execute();
        const { apiKey, key } = await this.insertKey(trx, account.id, input.keyName ?? 'default', now);
        return { ok: true as const, account, apiKey, key };
      });
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, reason: 'email_taken' };
      throw err;
    }
  }

  /**
   * Creates an account that signs in to the dashboard with a password (open sign-up). It
   * gets no API key: one made here could never be shown; the owner creates keys in the dashboard.
   */
  async createAccountWithPassword(input: { email: string; plan: string; passwordHash: string }, now = new Date()): Promise<{ ok: true; account: AccountRecord } | { ok: false; reason: 'email_taken' }> {
    const email = input.email.trim().toLowerCase();
    try {
      return await this.database.writeTransaction(async (trx) => {
        const taken = await trx.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirst();
        if (taken) return { ok: false as const, reason: 'email_taken' as const };
        const account: AccountRecord = { id: newId('acct', now.getTime()), email, plan: input.plan, created_at: now.toISOString() };
        await trx.insertInto('accounts').values(account).execute();
        await trx.insertInto('account_passwords').values({ account_id: account.id, password_hash: input.passwordHash, updated_at: now.toISOString() }).execute();
        return { ok: true as const, account };
      });
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, reason: 'email_taken' };
      throw err;
    }
  }

  /**
   * Sets (or replaces) the account's dashboard password hash and ends every dashboard
   * session of the account: a password change signs out whoever held the old one.
   */
  async setPasswordHash(accountId: string, passwordHash: string, now = new Date()): Promise<boolean> {
    return this.database.writeTransaction(async (trx) => {
      const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
      if (!account) return false;
      await trx
        .insertInto('account_passwords')
        .values({ account_id: accountId, password_hash: passwordHash, updated_at: now.toISOString() })
        .onConflict((oc) => oc.column('account_id').doUpdateSet({ password_hash: passwordHash, updated_at: now.toISOString() }))
        .execute();
      await trx.deleteFrom('dashboard_sessions').where('account_id', '=', accountId).execute();
      return true;
    });
  }

  /** The account with this e-mail address and its password hash (null when it has none), for signing in. */
  async findCredentials(email: string): Promise<{ account: AccountRecord; passwordHash: string | null } | undefined> {
    const row = await this.database.db
      .selectFrom('accounts')
      .leftJoin('account_passwords', 'account_passwords.account_id', 'accounts.id')
      .select(['accounts.id', 'accounts.email', 'accounts.plan', 'accounts.created_at', 'account_passwords.password_hash'])
      .where('accounts.email', '=', email.trim().toLowerCase())
      .executeTakeFirst();
    if (!row) return undefined;
    const { password_hash, ...account } = row;
    return { account, passwordHash: password_hash ?? null };
  }

  /** A new key for an existing account; `undefined` when the account does not exist. */
  async createKey(accountId: string, name: string, now = new Date()): Promise<{ apiKey: string; key: ApiKeyRecord } | undefined> {
    return this.database.writeTransaction(async (trx) => {
      const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
      if (!account) return undefined;
      return this.insertKey(trx, accountId, name, now);
    });
  }

  /** Active (not revoked) keys of an account, oldest first, masked. */
  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.database.db
      .selectFrom('api_keys')
      .select(['id', 'name', 'key_preview', 'created_at', 'last_used'])
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /**
   * Revokes a key of the account. Refuses to revoke the account's last active key, which
   * would lock its owner out with no way back through the API.
   */
  async revokeKey(accountId: string, keyId: string, now = new Date()): Promise<RevokeResult> {
    return this.database.writeTransaction(async (trx) => {
      // Serialise revocations of one account so two concurrent calls cannot both pass the last-key check.
      let lock = trx.selectFrom('accounts').select('id').where('id', '=', accountId);
      if (this.database.dialect === 'postgres') lock = lock.forUpdate();
      if (!(await lock.executeTakeFirst())) return 'not_found';
      const active = await trx.selectFrom('api_keys').select('id').where('account_id', '=', accountId).where('revoked_at', 'is', null).execute();
      if (!active.some((k) => k.id === keyId)) return 'not_found';
      if (active.length === 1) return 'last_key';
      await trx.updateTable('api_keys').set({ revoked_at: now.toISOString() }).where('id', '=', keyId).execute();
      return 'revoked';
    });
  }

  /**
   * The caller behind an API key, or null for unknown and revoked keys. Lookups of one key
   * made in the same event-loop turn share one query (the hot path of every authenticated
   * request); none reuses an answer read before it was asked, so a revocation is seen at once.
   */
  async findPrincipal(apiKey: string): Promise<Principal | null> {
    if (!looksLikeApiKey(apiKey, this.keyPrefix)) return null;
    return this.lookups.add(hashApiKey(apiKey), undefined);
  }

  private readonly lookups = new TurnBatcher<undefined, Principal | null>(async (hash, calls) => {
    const { rows } = await this.database.db.executeQuery(this.principalQuery({ hash }));
    // Each caller gets its own copy: request code may decorate the principal it is given.
    return calls.map(() => (rows[0] ? { ...rows[0] } : null));
  });

  async getAccount(id: string): Promise<AccountRecord | undefined> {
    return this.database.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | undefined> {
    return this.database.db.selectFrom('accounts').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return this.database.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  async countAccounts(): Promise<number> {
    const row = await this.database.db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Moves an account to `plan`; false when the account does not exist. */
  async setPlan(accountId: string, plan: string): Promise<boolean> {
    const res = await this.database.db.updateTable('accounts').set({ plan }).where('id', '=', accountId).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Active keys of an account with their request count in `period` (`YYYY-MM`). */
  async keyUsage(accountId: string, period: string): Promise<Array<ApiKeyRecord & { requests_this_month: number }>> {
    const rows = await this.database.db
      .selectFrom('api_keys')
      .leftJoin('api_key_usage', (j) => j.onRef('api_key_usage.key_id', '=', 'api_keys.id').on('api_key_usage.period', '=', period))
      .select(['api_keys.id', 'api_keys.name', 'api_keys.key_preview', 'api_keys.created_at', 'api_keys.last_used', 'api_key_usage.requests'])
      .where('api_keys.account_id', '=', accountId)
      .where('api_keys.revoked_at', 'is', null)
      .orderBy('api_keys.created_at')
      .orderBy('api_keys.id')
      .execute();
    return rows.map(({ requests, ...k }) => ({ ...k, requests_this_month: requests ?? 0 }));
  }

  private async insertKey(trx: Kysely<CoreTables>, accountId: string, name: string, now: Date): Promise<{ apiKey: string; key: ApiKeyRecord }> {
    const apiKey = generateApiKey(this.keyPrefix);
    const key: ApiKeyRecord = { id: newId('key', now.getTime()), name, key_preview: previewApiKey(apiKey, this.keyPrefix), created_at: now.toISOString(), last_used: null };
    await trx
      .insertInto('api_keys')
      .values({ ...key, account_id: accountId, key_hash: hashApiKey(apiKey), revoked_at: null })
      .execute();
    return { apiKey, key };
  }
}
