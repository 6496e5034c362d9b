import { basename, extname } from 'node:path';
import { parseArgs } from 'node:util';
import { ConvertClient, type ConversionOptions } from './convert.js';
import { EmailClient, type JobStatus, type ResultStatus, type ResultsFilter } from './email.js';
import { ApiError, ChecksumError } from './http.js';

/** Exit codes (documented in the package README and in `mailconv --help`). */
export const EXIT = {
  ok: 0,
  /** An unexpected failure (a bug, a file that cannot be read or written). */
  failure: 1,
  /** Bad command line: unknown command or flag, a missing URL, key or argument. */
  usage: 2,
  /** The service answered with an error (`{error, message}`: 4xx or 5xx). */
  api: 3,
  /** No answer: network failure or time-out. */
  network: 4,
  /** A download's SHA-256 did not match (the file was removed). */
  checksum: 5,
  /** `verify` of addresses: at least one address is not `valid`. */
  notValid: 6,
  /** A job or conversion ended `failed`, `cancelled`, `shredded` or `expired`. */
  jobFailed: 7,
} as const;

const HELP = `mailconv — command line for the email verification and file conversion APIs

Usage:
  mailconv verify <address>...                 verify addresses (one request each, or one batch)
  mailconv verify --file list.csv [--column C] [--out results.csv] [--smtp] [--dedupe]
                 [--status valid,risky] [--columns all] [--keep-formulas]
                                               a whole CSV or text list through a job, with progress;
                                               the results are written as CSV (default <list>.results.csv):
                                               a CSV list comes back with its own columns, the result
                                               columns appended; --status keeps only rows with those
                                               statuses (valid, invalid, risky, unknown); --columns all
                                               adds the sub-checks (syntax, dns, mx_count, smtp, …);
                                               cells starting with =, +, -, @, tab or CR get a leading '
                                               unless --keep-formulas (for a file read by a program)
  mailconv convert <file> --to <format> [--out path] [--quality N] [--preset P]
                   [--page-range R] [--ocr-language L] [--max-output-bytes N] [--webhook URL] [--share [--share-for S]]
                   [--batch] [--export s3://bucket[/key-template] [--export-endpoint URL] [--export-region R]]
  mailconv convert --from-url <url> --to <format> [same options]
                                               convert, with progress; the download's SHA-256 is verified;
                                               --from-url: the service fetches the file (public
                                               addresses only) instead of this machine uploading it;
                                               --batch: <file> is an archive (zip, tar, 7z, …) whose
                                               files are each converted, delivered as a zip with a
                                               manifest.json (default out <name>-<format>.zip);
                                               --export: the service uploads the result to S3-compatible
                                               storage (key template default {id}/{filename};
                                               placeholders {id} {filename} {stem} {ext} {date});
                                               credentials from AWS_ACCESS_KEY_ID,
                                               AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), never
                                               flags; --export-endpoint (MAILCONV_S3_ENDPOINT) for
                                               MinIO, R2, Ceph…; --export-region (AWS_REGION);
                                               exit 7 when the export failed;
                                               --webhook: also POST the signed outcome to URL (the
                                               account's request secret signs it); --share: print a
                                               link that downloads the result without a key (for S
                                               seconds; default until the output expires, ≤ 7 days)
  mailconv formats [<ext>]                     the formats (or what <ext> converts to)
  mailconv account                             plan, quota and usage of each configured service

Settings (flags win over the environment):
  --email-url   MAILCONV_EMAIL_URL     base URL of the email verification API
  --email-key   MAILCONV_EMAIL_KEY     its API key
  --convert-url MAILCONV_CONVERT_URL   base URL of the file conversion API
  --convert-key MAILCONV_CONVERT_KEY   its API key
  --json        machine-readable output on stdout (progress still goes to stderr)
  --quiet       no progress output
  --timeout S   time-out of one request in seconds

Exit codes:
  0 success · 1 unexpected failure · 2 usage error · 3 the API answered with an error
  4 network failure or time-out · 5 checksum mismatch · 6 verify: an address is not valid
  7 a job or conversion failed, was cancelled, shredded or expired, or its export failed
`;

class UsageError extends Error {}

/**
 * `--export s3://bucket[/key-template]` as the API's `export` object. Credentials come from
 * the AWS variables of the environment only: a flag would leave them in the shell's history
 * and the process list.
 */
function exportTarget(spec: string, endpoint: string | undefined, region: string | undefined, env: Record<string, string | undefined>): NonNullable<ConversionOptions['export']> {
  const m = /^s3:\/\/([^/]+)(?:\/(.+))?$/.exec(spec);
  if (!m) throw new UsageError('--export takes s3://bucket or s3://bucket/key-template (e.g. s3://reports/{date}/{filename})');
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secret = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secret) throw new UsageError('--export needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment (credentials are never taken from flags)');
  return {
    bucket: m[1]!,
    ...(m[2] ? { key: m[2] } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    access_key_id: accessKeyId,
    secret_access_key: secret,
    ...(env.AWS_SESSION_TOKEN ? { session_token: env.AWS_SESSION_TOKEN } : {}),
  };
}

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
}

/** A progress bar on stderr: redrawn in place on a terminal, one line per step of 10 % otherwise. */
function progress(io: Io, quiet: boolean) {
  let lastStep = -1;
  return {
    update(label: string, pct: number, detail = '') {
      if (quiet) return;
      const p = Math.max(0, Math.min(100, Math.floor(pct)));
      if (io.isTTY) {
        const filled = Math.round(p / 5);
        io.err(`\r${label} [${'#'.repeat(filled)}${' '.repeat(20 - filled)}] ${String(p).padStart(3)}% ${detail}`);
        return;
      }
      const step = Math.floor(p / 10);
      if (step === lastStep) return;
      lastStep = step;
      io.err(`${label} ${p}% ${detail}\n`);
    },
    done() {
      if (!quiet && io.isTTY) io.err('\n');
    },
  };
}

/** Runs the CLI with `argv` (without `node` and the script) and returns its exit code. */
export async function main(argv: readonly string[], env: Record<string, string | undefined>, io: Io): Promise<number> {
  let json = false;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'email-url': { type: 'string' },
        'email-key': { type: 'string' },
        'convert-url': { type: 'string' },
        'convert-key': { type: 'string' },
        json: { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        file: { type: 'string' },
        column: { type: 'string' },
        out: { type: 'string', short: 'o' },
        smtp: { type: 'boolean', default: false },
        dedupe: { type: 'boolean', default: false },
        status: { type: 'string' },
        columns: { type: 'string' },
        'keep-formulas': { type: 'boolean', default: false },
        to: { type: 'string' },
        quality: { type: 'string' },
        preset: { type: 'string' },
        'page-range': { type: 'string' },
        'ocr-language': { type: 'string' },
        webhook: { type: 'string' },
        share: { type: 'boolean', default: false },
        batch: { type: 'boolean', default: false },
        'from-url': { type: 'string' },
        'share-for': { type: 'string' },
        'max-output-bytes': { type: 'string' },
        export: { type: 'string' },
        'export-endpoint': { type: 'string' },
        'export-region': { type: 'string' },
      },
    });
    json = values.json;
    const [command, ...args] = positionals;
    if (values.help || !command) {
      io.out(HELP);
      return values.help ? EXIT.ok : EXIT.usage;
    }
    const timeoutMs = values.timeout === undefined ? undefined : positiveInt('--timeout', values.timeout) * 1000;
    const bar = progress(io, values.quiet);
    const print = (data: unknown, text: string) => io.out(json ? `${JSON.stringify(data)}\n` : `${text}\n`);
    const email = () => {
      const baseUrl = values['email-url'] ?? env.MAILCONV_EMAIL_URL;
      const apiKey = values['email-key'] ?? env.MAILCONV_EMAIL_KEY;
      if (!baseUrl || !apiKey) throw new UsageError('the email API needs --email-url and --email-key (or MAILCONV_EMAIL_URL and MAILCONV_EMAIL_KEY)');
      return new EmailClient({ baseUrl, apiKey, timeoutMs, userAgent: 'mailconv-cli' });
    };
    const convert = () => {
      const baseUrl = values['convert-url'] ?? env.MAILCONV_CONVERT_URL;
      const apiKey = values['convert-key'] ?? env.MAILCONV_CONVERT_KEY;
      if (!baseUrl || !apiKey) throw new UsageError('the conversion API needs --convert-url and --convert-key (or MAILCONV_CONVERT_URL and MAILCONV_CONVERT_KEY)');
      return new ConvertClient({ baseUrl, apiKey, timeoutMs, userAgent: 'mailconv-cli' });
    };

    switch (command) {
      case 'verify': {
        const client = email();
        if (values.file) {
          if (args.length) throw new UsageError('give either addresses or --file, not both');
          const out = values.out ?? `${values.file.replace(/\.(csv|txt)$/i, '')}.results.csv`;
          const filter = { ...resultsFilter(values.status, values.columns), ...(values['keep-formulas'] ? { formulas: 'keep' as const } : {}) };
          const job = await client.uploadJob({ path: values.file, column: values.column }, { useSmtp: values.smtp, dedupe: values.dedupe });
          const done = await client.waitForJob(job.job_id, { intervalMs: 500, onProgress: (j: JobStatus) => bar.update('verifying', j.progress_pct, `${j.processed}/${j.total}`) });
          bar.done();
          if (done.status !== 'completed') {
            print({ job_id: done.job_id, status: done.status, error: done.error }, `Job ${done.job_id} ${done.status}${done.error ? `: ${done.error}` : ''}.`);
            return EXIT.jobFailed;
          }
          const saved = await client.downloadResultsCsv(job.job_id, out, undefined, filter);
          const summary = { job_id: done.job_id, status: done.status, total: done.total, valid: done.valid, invalid: done.invalid, risky: done.risky, unknown: done.unknown, results_file: out, bytes: saved.bytes };
          print(summary, `Job ${done.job_id}: ${done.total} addresses — ${done.valid} valid, ${done.invalid} invalid, ${done.risky} risky, ${done.unknown} unknown.\nResults: ${out}`);
          return EXIT.ok;
        }
        if (args.length === 0) throw new UsageError('verify needs addresses or --file');
        const results = args.length === 1 ? [await client.verify(args[0]!, { useSmtp: values.smtp })] : (await client.verifyBatch(args, { useSmtp: values.smtp })).results;
        print(results, results.map((r) => `${r.email}\t${r.status}${r.reason ? ` (${r.reason})` : ''}\tscore ${r.score}${r.suggestion ? `\tdid you mean ${r.suggestion}?` : ''}`).join('\n'));
        return results.every((r) => r.status === 'valid') ? EXIT.ok : EXIT.notValid;
      }
      case 'convert': {
        const [file] = args;
        const fromUrl = values['from-url'];
        if (fromUrl ? args.length > 0 : !file || args.length > 1) throw new UsageError('convert needs one file, or --from-url <url> and no file');
        if (!values.to) throw new UsageError('convert needs --to <format>');
        const target = values.to.replace(/^\./, '').toLowerCase();
        const options = {
          ...(values.quality !== undefined ? { quality: positiveInt('--quality', values.quality) } : {}),
          ...(values.preset !== undefined ? { preset: values.preset } : {}),
          ...(values['page-range'] !== undefined ? { page_range: values['page-range'] } : {}),
          ...(values['ocr-language'] !== undefined ? { ocr_language: values['ocr-language'] } : {}),
          ...(values['max-output-bytes'] !== undefined ? { max_output_bytes: positiveInt('--max-output-bytes', values['max-output-bytes']) } : {}),
          ...(values.webhook !== undefined ? { webhook_url: values.webhook } : {}),
          ...(values.batch ? { batch: true } : {}),
          ...(values.export !== undefined ? { export: exportTarget(values.export, values['export-endpoint'] ?? env.MAILCONV_S3_ENDPOINT, values['export-region'] ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION, env) } : {}),
        };
        if (values.export === undefined && (values['export-endpoint'] !== undefined || values['export-region'] !== undefined)) throw new UsageError('--export-endpoint and --export-region go with --export s3://bucket[/key]');
        const client = convert();
        // A URL is fetched by the service (an upload that is not charged), then converted without waiting.
        const imported = fromUrl ? await client.importUrl(fromUrl) : null;
        const name = imported ? imported.filename : (file as string);
        const out = values.out ?? (values.batch ? `${basename(name, extname(name))}-${target}.zip` : `${basename(name, extname(name))}.${target}`);
        const started = imported ? await client.convert({ uploadId: imported.upload_id }, target, { ...options, wait: 0 }) : await client.createJob(file as string, target, options);
        bar.update('converting', 10, started.status);
        const record = await client.waitForConversion(started.id, { onProgress: (r) => bar.update('converting', r.status === 'completed' ? 90 : r.status === 'processing' ? 50 : 10, r.status) });
        if (record.status !== 'completed') {
          bar.done();
          print({ id: record.id, status: record.status, error: record.error }, `Conversion ${record.id} ${record.status}${record.error ? `: ${record.error.code} — ${record.error.message}` : ''}.`);
          return EXIT.jobFailed;
        }
        const saved = await client.download(record, out, (bytes, total) => bar.update('downloading', total ? (bytes * 100) / total : 100, `${bytes} bytes`));
        bar.update('downloading', 100, `${saved.bytes} bytes`);
        bar.done();
        const files = record.output?.files;
        const exported = record.export;
        const link = values.share || values['share-for'] !== undefined ? (await client.shareLinks.create(record.id, values['share-for'] === undefined ? {} : { expiresIn: positiveInt('--share-for', values['share-for']) })).link : null;
        print(
          {
            id: record.id,
            status: record.status,
            output: out,
            bytes: saved.bytes,
            sha256: saved.sha256,
            checksum_verified: true,
            ...(files ? { files } : {}),
            ...(link ? { share_url: link.url, share_expires_at: link.expires_at } : {}),
            ...(exported ? { export: { status: exported.status, bucket: exported.bucket, key: exported.key, etag: exported.etag, error: exported.error } } : {}),
          },
          `Converted ${fromUrl ?? file} → ${out} (${saved.bytes} bytes, SHA-256 ${saved.sha256} verified).${files ? `\n${files.converted} of ${files.total} files converted${files.failed ? `, ${files.failed} failed (see manifest.json; not charged)` : ''}.` : ''}${link ? `\nShare link (no key needed, until ${link.expires_at}): ${link.url}` : ''}${
            exported ? (exported.status === 'completed' ? `\nExported to s3://${exported.bucket}/${exported.key ?? ''} (ETag ${exported.etag ?? '?'}).` : `\nExport to s3://${exported.bucket} ${exported.status}${exported.error ? `: ${exported.error.message}` : ''}.`) : ''
          }`,
        );
        return exported && exported.status !== 'completed' ? EXIT.jobFailed : EXIT.ok;
      }
      case 'formats': {
        const client = convert();
        if (args[0]) {
          const targets = await client.targets(args[0].replace(/^\./, ''));
          print(targets, targets.targets.map((t) => t.format).join('\n'));
        } else {
          const formats = await client.formats();
          print(formats, formats.formats.map((f) => `${f.ext}\t${f.family}\t${f.mime_type}\t${f.readable ? 'read' : ''}${f.readable && f.writable ? '/' : ''}${f.writable ? 'write' : ''}`).join('\n'));
        }
        return EXIT.ok;
      }
      case 'account': {
        const hasEmail = Boolean((values['email-url'] ?? env.MAILCONV_EMAIL_URL) && (values['email-key'] ?? env.MAILCONV_EMAIL_KEY));
        const hasConvert = Boolean((values['convert-url'] ?? env.MAILCONV_CONVERT_URL) && (values['convert-key'] ?? env.MAILCONV_CONVERT_KEY));
        if (!hasEmail && !hasConvert) throw new UsageError('account needs the URL and key of at least one service');
        const result: Record<string, unknown> = {};
        const lines: string[] = [];
        if (hasEmail) {
          const a = await email().account();
          result.email = a;
          lines.push(`Email verification: ${a.account.email}, plan ${a.account.plan_name}; ${a.quota.used}/${a.quota.limit} used, ${a.quota.remaining} left until ${a.quota.reset_date} (UTC); ${a.rate_limit_rpm} requests/min.`);
        }
        if (hasConvert) {
          const client = convert();
          const [usage, limits] = await Promise.all([client.usage(), client.limits()]);
          result.convert = { usage, limits };
          lines.push(`File conversion: plan ${limits.plan}; ${usage.quota.used}/${usage.quota.limit} conversions used, ${usage.quota.remaining} left until ${usage.period_end.slice(0, 10)} (UTC).`);
        }
        print(result, lines.join('\n'));
        return EXIT.ok;
      }
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; see mailconv --help`);
    }
  } catch (err) {
    const fail = (code: number, data: Record<string, unknown>, text: string) => {
      if (json) io.out(`${JSON.stringify({ error: data })}\n`);
      io.err(`mailconv: ${text}\n`);
      return code;
    };
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) return fail(EXIT.usage, { code: 'usage', message: (err as Error).message }, `${(err as Error).message}`);
    if (err instanceof ApiError) {
      const data = { ...err.body, code: err.code, status: err.status, message: err.message, request_id: err.requestId };
      if (err.status === 0) return fail(EXIT.network, data, err.message);
      return fail(EXIT.api, data, `${err.code} (HTTP ${err.status}): ${err.message}${err.requestId ? ` [request ${err.requestId}]` : ''}`);
    }
    if (err instanceof ChecksumError) return fail(EXIT.checksum, { code: 'checksum_mismatch', expected: err.expected, actual: err.actual }, err.message);
    return fail(EXIT.failure, { code: 'failure', message: (err as Error).message }, (err as Error).message);
  }
}

const RESULT_STATUSES: readonly ResultStatus[] = ['valid', 'invalid', 'risky', 'unknown'];

/** `--status` and `--columns` of `verify --file`, checked before anything is uploaded. */
function resultsFilter(status: string | undefined, columns: string | undefined): ResultsFilter {
  const filter: ResultsFilter = {};
  if (status !== undefined) {
    const wanted = status.split(',').map((s) => s.trim());
    const bad = wanted.find((s) => !(RESULT_STATUSES as readonly string[]).includes(s));
    if (bad !== undefined) throw new UsageError(`--status takes a comma-separated list of ${RESULT_STATUSES.join(', ')}; "${bad}" is not one`);
    filter.status = wanted as ResultStatus[];
  }
  if (columns !== undefined) {
    if (columns !== 'all' && columns !== 'default') throw new UsageError('--columns takes all or default');
    filter.columns = columns;
  }
  return filter;
}

function positiveInt(flag: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${flag} must be a positive integer`);
  return Number(value);
}

/** Runs the CLI with this process's arguments, environment and streams; returns the exit code. */
export function runFromProcess(): Promise<number> {
  return main(process.argv.slice(2), process.env, {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    isTTY: Boolean(process.stderr.isTTY),
  });
}
