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

/** An account's dashboard password (scrypt, PHC string); accounts without a row cannot sign in. */
export interface AccountPasswordsTable {
  account_id: string;
  password_hash: string;
  updated_at: string;
}

/**
 * A dashboard session. Only the SHA-256 of the session id (the cookie value) is stored, so
 * a copy of the table signs no one in. Ends `expires_at` (absolute) or when `last_seen_at`
 * is older than the idle limit.
 */
export interface DashboardSessionsTable {
  id_hash: string;
  account_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
}

/** Failed dashboard sign-ins, per subject (`email:…` or `ip:…`), kept for the throttle's window. */
export interface SignInFailuresTable {
  subject: string;
  at: string;
}

/** One row rewritten by the readiness check: proof that the database still writes. */
export interface ReadinessProbeTable {
  id: number;
  written_at: string;
}

export interface CoreTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  api_key_usage: ApiKeyUsageTable;
  quota_usage: QuotaUsageTable;
  quota_reservations: QuotaReservationsTable;
  account_passwords: AccountPasswordsTable;
  dashboard_sessions: DashboardSessionsTable;
  sign_in_failures: SignInFailuresTable;
  readiness_probe: ReadinessProbeTable;
}
