import { AppError } from '../errors/app-error.js';
import { BEARER_CHALLENGE } from '../http/auth.js';
import type { AccountsRepository, ApiKeyRecord } from './accounts.repository.js';

/**
 * An account's own API keys, for the dashboard (both services): create (the full key shown once), list
 * (masked), revoke (never the last active key). Failures are AppErrors of the closed list.
 */
export class ApiKeysService {
  constructor(private readonly deps: { accounts: AccountsRepository; clock: () => Date }) {}

  list(accountId: string): Promise<ApiKeyRecord[]> {
    return this.deps.accounts.listKeys(accountId);
  }

  /** A new key named `name` (trimmed unless that leaves nothing); its full value is in this answer only. */
  async create(accountId: string, name: string): Promise<{ apiKey: string; key: ApiKeyRecord }> {
    const created = await this.deps.accounts.createKey(accountId, name.trim() || name, this.deps.clock());
    if (!created) throw new AppError('unauthorized', 'The account of this API key no longer exists.', undefined, BEARER_CHALLENGE);
    return created;
  }

  async revoke(accountId: string, id: string): Promise<void> {
    const result = await this.deps.accounts.revokeKey(accountId, id, this.deps.clock());
    if (result === 'not_found') throw new AppError('not_found', `No active API key ${id} on this account.`);
    if (result === 'last_key') throw new AppError('conflict', 'This is the account’s last active key; create another key before revoking it.');
  }
}
