/**
 * Export to S3-compatible storage (extension, issue 24): a conversion's `export` object
 * uploads the output, once it is made, to a bucket of the caller's (AWS S3, MinIO, R2,
 * Ceph, …) with `@aws-sdk/client-s3` (multipart past one part, through
 * `@aws-sdk/lib-storage`). The endpoint goes through the egress guard like every URL the
 * service calls (public addresses only unless the operator allows otherwise; the
 * connection pinned to the address that was checked). The credentials are sealed with the
 * service's secrets key while the conversion waits, removed once the export ran, and never
 * answered, logged or put in an error.
 */
import { createReadStream } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { AppError, checkUrl, pinnedLookup, type EgressPolicy, type SecretBox } from '@mailconv/platform';
import type { ConvertConfig } from '../config.js';
import { urlPolicy } from './url-fetcher.js';

/** Where an output goes, as stored and answered (no credentials). */
export interface ExportTarget {
  /** The S3-compatible endpoint; null: AWS S3 in `region`. */
  endpoint: string | null;
  bucket: string;
  /** The object key template: `{id}`, `{filename}`, `{stem}`, `{ext}`, `{date}`. */
  key_template: string;
  region: string;
  force_path_style: boolean;
}

/** The record's `export`: the target, and how the export went. */
export interface ExportRecord extends ExportTarget {
  status: 'pending' | 'completed' | 'failed';
  /** The object's key, once the output was named. */
  key: string | null;
  /** The object's ETag as the store answered it (quotes removed; `-N` for N parts). */
  etag: string | null;
  error: { code: string; message: string } | null;
  completed_at: string | null;
}

interface Credentials {
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
}

const FIELDS = ['endpoint', 'bucket', 'key', 'region', 'access_key_id', 'secret_access_key', 'session_token', 'force_path_style'] as const;
const PLACEHOLDERS = ['id', 'filename', 'stem', 'ext', 'date'] as const;
export const DEFAULT_KEY_TEMPLATE = '{id}/{filename}';

const bad = (field: string, message: string) => new AppError('invalid_request', `export.${field}: ${message}`, { field: `export.${field}` });

/** Printable text of at most `max` characters, or 400 naming the field. */
function text(raw: Record<string, unknown>, field: string, max: number, required: boolean): string | undefined {
  const v = raw[field];
  if (v === undefined || v === null || v === '') {
    if (required) throw bad(field, 'is required.');
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  if (typeof v !== 'string' || v.length > max || /[\u0000-\u001f\u007f]/.test(v)) throw bad(field, `must be text of at most ${max} characters without control characters.`);
  return v;
}

/** The request's `export` object checked field by field (400 naming `export.<field>`). */
export function parseExport(raw: unknown): { target: ExportTarget; credentials: Credentials } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AppError('invalid_request', "'export' must be an object {bucket, access_key_id, secret_access_key, endpoint?, key?, region?, force_path_style?}.", { field: 'export' });
  }
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).find((k) => !(FIELDS as readonly string[]).includes(k));
  if (unknown) throw bad(unknown.slice(0, 64), `unknown field; the fields are ${FIELDS.join(', ')}.`);
  const bucket = text(o, 'bucket', 63, true)!;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..')) throw bad('bucket', 'must be a bucket name: 3–63 lower-case letters, digits, dots and hyphens.');
  const keyTemplate = text(o, 'key', 1024, false) ?? DEFAULT_KEY_TEMPLATE;
  for (const m of keyTemplate.matchAll(/\{([^}]*)\}/g)) {
    if (!(PLACEHOLDERS as readonly string[]).includes(m[1] ?? '')) throw bad('key', `unknown placeholder {${(m[1] ?? '').slice(0, 20)}}; the placeholders are ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}.`);
  }
  if (keyTemplate.startsWith('/')) throw bad('key', 'must not start with "/".');
  const region = text(o, 'region', 40, false) ?? 'us-east-1';
  if (!/^[a-z0-9-]+$/.test(region)) throw bad('region', 'must be a region name such as us-east-1.');
  const endpoint = text(o, 'endpoint', 2048, false) ?? null;
  if (endpoint !== null) {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw bad('endpoint', 'must be an http(s) URL such as https://s3.example.com.');
    }
    if (url.username || url.password) throw bad('endpoint', 'must not hold credentials; give access_key_id and secret_access_key.');
    if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) throw bad('endpoint', 'must be the service address only (no path, query or fragment).');
  }
  const pathStyle = o.force_path_style;
  if (pathStyle !== undefined && typeof pathStyle !== 'boolean') throw bad('force_path_style', 'must be true or false.');
  const credentials: Credentials = {
    access_key_id: text(o, 'access_key_id', 256, true)!,
    secret_access_key: text(o, 'secret_access_key', 256, true)!,
    ...(text(o, 'session_token', 4096, false) ? { session_token: o.session_token as string } : {}),
  };
  // Path-style by default for another store (what MinIO, Ceph and most others answer); virtual-host for AWS.
  return { target: { endpoint: endpoint === null ? null : new URL(endpoint).origin, bucket, key_template: keyTemplate, region, force_path_style: pathStyle ?? endpoint !== null }, credentials };
}

/** The object key for an output: the template with its placeholders filled in. */
export function expandKey(template: string, o: { id: string; filename: string; format: string; date: Date }): string {
  const dot = o.filename.lastIndexOf('.');
  const values: Record<string, string> = {
    id: o.id,
    filename: o.filename,
    stem: dot > 0 ? o.filename.slice(0, dot) : o.filename,
    ext: o.format,
    date: o.date.toISOString().slice(0, 10),
  };
  return template.replace(/\{(id|filename|stem|ext|date)\}/g, (_, name: string) => values[name] ?? '');
}

/** The URL the store is reached at: where the egress guard must look. */
function storeUrl(target: ExportTarget): string {
  const base = new URL(target.endpoint ?? `https://s3.${target.region}.amazonaws.com`);
  return target.force_path_style ? base.origin : `${base.protocol}//${target.bucket}.${base.host}`;
}

/**
 * The egress guard's policy for store endpoints: the URL settings' allow and deny lists,
 * fence and resolvers; https and public addresses only unless `CONVERT_EXPORT_ALLOW_INSECURE`.
 */
export function exportPolicy(config: Pick<ConvertConfig, 'urls' | 'exports'>): EgressPolicy {
  const insecure = config.exports.allowInsecure;
  return { ...urlPolicy(config.urls), schemes: insecure ? ['https:', 'http:'] : ['https:'], allowPrivate: config.urls.allowPrivate || insecure };
}

export interface S3ExporterOptions {
  /** The egress guard's policy for store endpoints. */
  policy: EgressPolicy;
  /** Part size of multipart uploads (at least 5 MiB); smaller outputs go in one PUT. */
  partBytes: number;
  /** One request to the store at most. */
  timeoutMs: number;
  /** Seals the credentials while the conversion waits. */
  box: SecretBox;
}

/** Accepts exports (checked before any charge) and runs them once the output is made. */
export class S3Exporter {
  constructor(private readonly o: S3ExporterOptions) {}

  /**
   * The `export` object checked (fields, then the endpoint through the egress guard: a
   * refused address is 400 naming `export.endpoint`), the credentials sealed for `context`
   * (the conversion's id). Answers what the record keeps.
   */
  async accept(raw: unknown, context: string): Promise<{ record: ExportRecord; sealed: string }> {
    const { target, credentials } = parseExport(raw);
    const check = await checkUrl(storeUrl(target), this.o.policy);
    if (!check.ok) throw bad('endpoint', check.message);
    return {
      record: { ...target, status: 'pending', key: null, etag: null, error: null, completed_at: null },
      sealed: this.o.box.seal(JSON.stringify(credentials), context),
    };
  }

  /**
   * Uploads `file` to the record's bucket under its key. Never throws: a failure is the
   * record's `error` (`export_failed`, the store's own words without any credential).
   */
  async run(
    record: ExportRecord,
    sealed: string,
    context: string,
    file: { path: string; key: string; mime_type: string; sha256: string },
    now: () => Date,
    signal?: AbortSignal,
  ): Promise<ExportRecord> {
    let credentials: Credentials | undefined;
    const done = (fields: Pick<ExportRecord, 'status' | 'etag' | 'error'>): ExportRecord => ({ ...record, key: file.key, ...fields, completed_at: now().toISOString() });
    try {
      credentials = JSON.parse(this.o.box.open(sealed, context)) as Credentials;
    } catch {
      return done({ status: 'failed', etag: null, error: { code: 'export_failed', message: 'The export’s credentials could not be read (the service’s secrets key changed); nothing was uploaded.' } });
    }
    // Checked again now: the name may point elsewhere than when the request was accepted.
    const check = await checkUrl(storeUrl(record), this.o.policy);
    if (!check.ok) return done({ status: 'failed', etag: null, error: { code: 'export_failed', message: `export.endpoint: ${check.message}` } });
    const lookup = pinnedLookup(check.target);
    const httpAgent = new HttpAgent({ keepAlive: true, lookup });
    const httpsAgent = new HttpsAgent({ keepAlive: true, lookup });
    const client = new S3Client({
      region: record.region,
      ...(record.endpoint ? { endpoint: record.endpoint } : {}),
      forcePathStyle: record.force_path_style,
      credentials: { accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key, ...(credentials.session_token ? { sessionToken: credentials.session_token } : {}) },
      requestHandler: new NodeHttpHandler({ httpAgent, httpsAgent, connectionTimeout: 10_000, requestTimeout: this.o.timeoutMs }),
      // Other stores do not all read the SDK's streaming checksum trailers: checksums only where S3 requires them.
      ...(record.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const } : {}),
      maxAttempts: 3,
    });
    const upload = new Upload({
      client,
      params: { Bucket: record.bucket, Key: file.key, Body: createReadStream(file.path), ContentType: file.mime_type, Metadata: { sha256: file.sha256 } },
      partSize: this.o.partBytes,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const stop = () => void upload.abort().catch(() => undefined);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const out = await upload.done();
      return done({ status: 'completed', etag: (out.ETag ?? '').replace(/^"|"$/g, '') || null, error: null });
    } catch (err) {
      return done({ status: 'failed', etag: null, error: { code: 'export_failed', message: scrub(describe(err), credentials) } });
    } finally {
      signal?.removeEventListener('abort', stop);
      client.destroy();
      httpAgent.destroy();
      httpsAgent.destroy();
    }
  }
}

/** The store's answer in words: its error code and message, or the network's. */
function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  const what = `${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message ?? String(err)}`.slice(0, 500);
  return `The upload to the bucket failed${status ? ` (HTTP ${status})` : e.code ? ` (${e.code})` : ''}: ${what}`;
}

/** Whatever a store echoed of the credentials, removed. */
function scrub(message: string, c: Credentials): string {
  let out = message;
  for (const secret of [c.secret_access_key, c.session_token, c.access_key_id]) if (secret) out = out.split(secret).join('…');
  return out;
}
