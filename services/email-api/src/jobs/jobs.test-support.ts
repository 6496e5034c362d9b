import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { D, type RigHandle } from '@mailconv/test-rig';

/** Helpers shared by the job suites (not a test file itself: importing it registers no tests). */

export const BASE = 'https://verify.example.test';

/** Settings of the suites: tiny chunks so that a few dozen addresses make a multi-chunk job. */
export function jobsEnv(rig: RigHandle, databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    EMAIL_DATABASE_URL: databaseUrl,
    EMAIL_LOG_LEVEL: 'silent',
    EMAIL_DNS_SERVERS: rig.dnsServer,
    // Addresses at the silent resolver take a few hundred ms: they keep a job running long
    // enough to cancel or kill it part-way.
    EMAIL_DNS_TIMEOUT_MS: '150',
    EMAIL_PUBLIC_BASE_URL: BASE,
    EMAIL_JOBS_CHUNK_SIZE: '10',
    EMAIL_JOBS_POLL_MS: '20',
    EMAIL_JOBS_LEASE_MS: '1500',
    // SMTP probes reach the rig's loopback peers and nothing else.
    EMAIL_SMTP_HELO: 'probe.mailconv.test',
    EMAIL_SMTP_FROM: 'probe@mailconv.test',
    EMAIL_SMTP_ALLOW_PRIVATE: 'true',
    EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8',
    EMAIL_SMTP_PORT: String(rig.smtpPort),
    EMAIL_JOBS_GREYLIST_RETRY_MS: '100',
    EMAIL_JOBS_GREYLIST_RETRIES: '2',
    // Webhook deliveries reach loopback receivers and nothing else.
    EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
    ...extra,
  };
}

/** `n` addresses whose lookups go to the rig's resolver that never answers (distinct names: nothing is cached). */
export const slowAddresses = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `u${i}@${tag}${i}.${D.silent}`);

/** Minimal RFC 4180 reader for the assertions (quoted fields, doubled quotes, CRLF records). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(field, '', 'the CSV ends with CRLF');
  return rows;
}


/**
 * `text` read by csv-parse as a strict RFC 4180 reader (CRLF records, no trimming, every
 * record as wide as the first; a quote inside an unquoted cell is kept as text, as Python's
 * csv module and spreadsheets read it): a real parser besides `parseCsv`.
 */
export function strictCsv(text: string): string[][] {
  return parse(text, { record_delimiter: '\r\n', relax_quotes: true }) as string[][];
}

/** A `multipart/form-data` request (fields and file parts) for `app.inject`, authorised with `key`. */
export function multipartForm(parts: Array<{ name: string; value: string; filename?: string; type?: string }>, key: string): { payload: string; headers: Record<string, string> } {
  const boundary = 'mailconvBoundary7MA4YWxk';
  const body = parts
    .map((p) => `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"\r\nContent-Type: ${p.type ?? 'text/csv'}` : ''}\r\n\r\n${p.value}\r\n`)
    .join('');
  return { payload: `${body}--${boundary}--\r\n`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${key}` } };
}
