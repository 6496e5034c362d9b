import type { ConversionRow } from '../repositories/conversions.repository.js';
import type { ExportRecord } from './s3-export.js';

/** The events a conversion webhook endpoint can subscribe to (extension, issue 24), in their canonical order. */
export const CONVERSION_EVENTS = ['conversion.completed', 'conversion.failed'] as const;

/** Names the service in every delivery, as the email service names itself. */
export const WEBHOOK_USER_AGENT = 'MailconvFileConversion-Webhooks/1.0';

/** What a finished conversion's webhook says: its outcome, where to download it, and nothing secret. */
export function conversionEvent(
  row: Pick<ConversionRow, 'id' | 'download_token'>,
  outcome: { status: 'completed' | 'failed'; output: { format: string; size_bytes: number; sha256: string } | null; error: { code: string; message: string } | null; export?: ExportRecord },
  publicBaseUrl: string,
  now: Date,
): Record<string, unknown> {
  const completed = outcome.status === 'completed';
  return {
    event: completed ? 'conversion.completed' : 'conversion.failed',
    id: row.id,
    status: outcome.status,
    output: completed && outcome.output ? { format: outcome.output.format, size_bytes: outcome.output.size_bytes, sha256: outcome.output.sha256 } : null,
    // The owner's API key is still needed to download (the contract's rule); a share link is not made here.
    download_url: completed ? `${publicBaseUrl}/api/v1/download/${row.download_token}` : null,
    error: outcome.error,
    // Extension: where the output was exported (no credentials), when the conversion asked.
    ...(outcome.export ? { export: { status: outcome.export.status, bucket: outcome.export.bucket, key: outcome.export.key, etag: outcome.export.etag, error: outcome.export.error } } : {}),
    timestamp: now.toISOString(),
  };
}
