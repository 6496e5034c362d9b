import type { Generated } from 'kysely';
import type { CoreTables, WebhookTables } from '@mailconv/platform';

/** An uploaded source file. `deleted_at` is set when its bytes leave the disk (shred, expiry). */
export interface UploadsTable {
  id: string;
  account_id: string;
  filename: string;
  format: string;
  mime_type: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
  expires_at: string;
  deleted_at: string | null;
  /** Imported from a URL (issue 22): the address that answered, after redirects; null for an upload. */
  source_url: string | null;
}

/**
 * A conversion (`POST /convert` and `POST /jobs` share the one `cnv_` id space). JSON
 * columns (`options`, `output`, `error`) hold the record's sub-objects as sent.
 */
export interface ConversionsTable {
  id: string;
  account_id: string;
  upload_id: string;
  status: string;
  target_format: string;
  options: string;
  output: string | null;
  output_path: string | null;
  /** The download token, for the owner's record; downloads look it up by `token_hash`. */
  download_token: string;
  /** SHA-256 (hex) of the download token. */
  token_hash: string;
  error: string | null;
  /** Quota month the conversion was charged to (`YYYY-MM`), for refunds. */
  quota_period: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  expires_at: string;
  /** The process (and attempt) running it; null when nobody does. */
  lease_owner: string | null;
  /** Until when `lease_owner` holds it without renewing (ISO time). */
  lease_until: string | null;
  /** Times a worker claimed it; a conversion whose lease expired is retried once. */
  attempts: Generated<number>;
  /** The plan's `max_concurrent_jobs` when it was accepted: conversions of the account running at once. */
  account_limit: number;
  /** Extension (issue 24): a per-request `webhook_url` told when the conversion completes or fails. */
  webhook_url: string | null;
  /** Quota units charged when it was accepted: 1, or the files of a batch (issue 24); what a failure or a shred refunds. */
  units: number;
  /** Extension (issue 24): the S3 export asked for and how it went (JSON, no credentials), or null. */
  export: string | null;
  /** The export's credentials sealed with the service's secrets key (never in clear); null once the export ran. */
  export_credentials: string | null;
}

/**
 * A share link (extension, issue 24): downloads a conversion's output without an API key
 * until it expires or is revoked. Only the SHA-256 of its token is kept.
 */
export interface ShareLinksTable {
  id: string;
  account_id: string;
  conversion_id: string;
  /** SHA-256 (hex) of the link's token; the token itself is in the creation answer only. */
  token_hash: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/**
 * An account's signing certificate (issue 25) for the `sign` option: what may be shown of it,
 * and its key and certificates sealed with the service's secrets key (the p12's password is not kept).
 */
export interface SigningCertificatesTable {
  id: string;
  account_id: string;
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  /** SHA-256 (hex) of the certificate. */
  sha256: string;
  /** The key (PKCS#8) and certificates (DER), sealed for this row's id. */
  sealed: string;
  created_at: string;
}

/** A lease on work that runs in one process at a time (the retention sweeper). */
export interface MaintenanceLeasesTable {
  name: string;
  owner: string;
  lease_until: string;
}

/** Tables of the conversion service's own database. */
export interface ConvertTables extends CoreTables, WebhookTables {
  uploads: UploadsTable;
  conversions: ConversionsTable;
  maintenance_leases: MaintenanceLeasesTable;
  share_links: ShareLinksTable;
  signing_certificates: SigningCertificatesTable;
}
