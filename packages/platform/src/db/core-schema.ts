/**
 * Tables every service owns a copy of, in its own database: accounts, their API keys and
 * the monthly quota ledger. Timestamps are ISO 8601 UTC strings (`toISOString()`), which
 * sort and compare the same way on SQLite and PostgreSQL.
 */
export interface AccountsTable {
  id: string;
  email: string;
  plan: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  key_hash: string;
  key_preview: string;
  created_at: string;
  last_used: string | null;
  revoked_at: string | null;
}

/** Requests made with each key per quota month (`YYYY-MM`). */
export interface ApiKeyUsageTable {
  key_id: string;
  period: string;
  requests: number;
}

/** Units charged to an account per quota month (`YYYY-MM`, UTC). Reserved units count as used. */
export interface QuotaUsageTable {
  account_id: string;
  period: string;
  used: number;
}

/** A reservation of units (a bulk job); refunds never exceed what it reserved. */
export interface QuotaReservationsTable {
  id: string;
  account_id: string;
  period: string;
  units: number;
  refunded: number;
  created_at: string;
}

export interface CoreTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  api_key_usage: ApiKeyUsageTable;
  quota_usage: QuotaUsageTable;
  quota_reservations: QuotaReservationsTable;
}
