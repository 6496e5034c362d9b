import { Readable } from 'node:stream';
import { Type, type Static } from 'typebox';
import { AppError, DateTime, Nullable, StringEnum, formChecker, utf8JsonParser, withHeaders, type ServiceApp } from '@mailconv/platform';
import { REASONS, STATUSES } from '@mailconv/verifier';
import { planOf, type EmailDeps } from '../../deps.js';
import { MAX_EMAIL_INPUT, MAX_JOB_EMAILS, type InputRows } from '../../jobs/job-list.js';
import { jobView, type JobSource, type JobsService } from '../../jobs/jobs.service.js';
import { CSV_HEADER, EXTRA_COLUMNS, parseStatusFilter } from '../../jobs/results.js';
import { ListReader, OFFLOAD_MIN_BYTES, OffloadedList } from '../../jobs/list-offload.js';
import { readUpload } from '../../jobs/upload.js';
import { IDEMPOTENT_REPLAYED, SECURED, errors, secured } from '../../schemas.js';
import { sendIdempotent } from '../idempotent-reply.js';

const JOB_STATES = ['queued', 'processing', 'completed', 'failed', 'cancelled'] as const;

const SubmitBody = Type.Object(
  {
    emails: Type.Array(Type.String({ maxLength: MAX_EMAIL_INPUT }), {
      minItems: 1,
      maxItems: MAX_JOB_EMAILS,
      description: 'At most 1,000,000 addresses. Empty entries are refused (400) unless `dedupe` is true, which drops them.',
    }),
    use_smtp: Type.Optional(Type.Boolean({ default: false, description: 'Probe mailboxes over SMTP (plans with `features.smtp`).' })),
    dedupe: Type.Optional(Type.Boolean({ default: false, description: 'Trim whitespace, drop empty entries and remove case-insensitive duplicates (the first spelling is kept) before quota is reserved.' })),
  },
  { additionalProperties: false },
);

/** The upload form; `readUpload` checks the fields it collects against this same schema. */
const UploadForm = Type.Object(
  {
    file: Type.String({
      format: 'binary',
      description:
        'The list: a CSV file (the column named by `column`, else the first; a first row without `@` is a header) or a text file (`text/plain` or `.txt`: one address per line). ' +
        'A CSV file’s own columns are kept: the CSV download returns each row as the file spelled it with the result columns appended (extension), a cell a spreadsheet would run as a formula with a leading `\'` (see the results’ `formulas`).',
    }),
    column: Type.Optional(Type.String({ maxLength: 1024, description: 'Header of the CSV column holding the addresses (case-insensitive).' })),
    use_smtp: Type.Optional(Type.String({ enum: ['true', 'false', '1', '0', ''], description: 'Probe mailboxes over SMTP; empty means false.' })),
    dedupe: Type.Optional(Type.String({ enum: ['true', 'false', '1', '0', ''], description: 'As `dedupe` of the JSON body; empty means false.' })),
  },
  { description: 'Upload form: one file part and optional fields.' },
);
const checkUploadForm = formChecker(UploadForm);

const SubmitResponse = Type.Object({
  success: Type.Boolean(),
  job_id: Type.String(),
  status: StringEnum(['queued']),
  submitted: Type.Integer({ description: 'Entries in the request.' }),
  duplicates_removed: Type.Integer({ description: 'Entries dropped by `dedupe` (duplicates and empty entries).' }),
  total: Type.Integer({ description: 'Addresses billed and verified, after dedupe.' }),
  status_url: Type.String({ format: 'uri', description: 'Absolute URL of `GET /api/v1/jobs/{job_id}` (from `EMAIL_PUBLIC_BASE_URL`).' }),
});

const counter = (what: string) => Type.Integer({ description: what });

const JobStatusResponse = Type.Object({
  success: Type.Boolean(),
  job_id: Type.String(),
  status: StringEnum(JOB_STATES),
  total: Type.Integer(),
  processed: Type.Integer({ description: 'Addresses whose results are stored.' }),
  valid: counter('Same as `valid_count` (decision 2: both namings).'),
  invalid: counter('Same as `invalid_count`.'),
  risky: counter('Same as `risky_count`.'),
  unknown: counter('Same as `unknown_count`.'),
  valid_count: Type.Integer(),
  invalid_count: Type.Integer(),
  risky_count: Type.Integer(),
  unknown_count: Type.Integer(),
  progress_pct: Type.Integer({ minimum: 0, maximum: 100, description: '`processed` × 100 / `total`, rounded down.' }),
  created_at: DateTime(),
  started_at: Nullable(DateTime({ description: 'When a worker first claimed part of the job.' })),
  completed_at: Nullable(DateTime({ description: 'When the job reached a final state (completed, failed or cancelled).' })),
  error: Nullable(Type.String({ description: 'Short reason of a `failed` job.' })),
  results_deleted_at: Nullable(DateTime({ description: 'When the addresses and results were deleted (`DELETE /api/v1/jobs/{job_id}/results` or the retention sweep); null while they are kept.', 'x-extension': true })),
});

const JobListItem = Type.Object({
  job_id: Type.String(),
  status: StringEnum(JOB_STATES),
  total: Type.Integer(),
  processed: Type.Integer(),
  valid_count: Type.Integer(),
  invalid_count: Type.Integer(),
  risky_count: Type.Integer(),
  unknown_count: Type.Integer(),
  created_at: DateTime(),
  completed_at: Nullable(DateTime()),
  results_deleted_at: Nullable(DateTime({ description: 'When the addresses and results were deleted; null while they are kept.', 'x-extension': true })),
});

const CancelResponse = Type.Object({
  success: Type.Boolean(),
  job_id: Type.String(),
  status: StringEnum(['cancelled']),
  processed: Type.Integer({ description: 'Addresses verified (and charged) before the cancel.' }),
  refunded: Type.Integer({ description: 'Units of the reservation given back: `total` − `processed`.' }),
});

/** What `columns=all` adds to each item (extension); null on rows stored before the sub-checks were kept. */
const EXTRA_FIELDS = {
  normalized: Nullable(Type.String({ description: 'Decision 12.' })),
  syntax: Nullable(Type.Boolean()),
  dns: Nullable(Type.Boolean()),
  mx_count: Nullable(Type.Integer()),
  mx_provider: Nullable(Type.String({ description: 'Recognised mail providers behind the MX hosts, `|`-separated; null when none.' })),
  smtp: Nullable(Type.Boolean()),
  catch_all: Nullable(Type.Boolean()),
  disposable: Nullable(Type.Boolean()),
  role_based: Nullable(Type.Boolean()),
  free_provider: Nullable(Type.Boolean()),
} satisfies Record<(typeof EXTRA_COLUMNS)[number], unknown>;

const ResultItem = Type.Object({
  email: Type.String(),
  is_valid: Type.Boolean(),
  status: StringEnum(STATUSES),
  reason: Nullable(StringEnum(REASONS)),
  score: Nullable(Type.Integer()),
  suggestion: Nullable(Type.String()),
  ...Object.fromEntries(Object.entries(EXTRA_FIELDS).map(([k, v]) => [k, Type.Optional({ ...v, 'x-extension': true })])),
});

const ResultsResponse = Type.Object({
  success: Type.Boolean(),
  job_id: Type.String(),
  status: StringEnum(JOB_STATES),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
  matched: Type.Integer({ description: 'Rows the `status` filter selects (`total` without one); pages run over these.', 'x-extension': true }),
  results: Type.Array(ResultItem, { description: 'In input order; empty past the last page.' }),
});

const DeleteResultsResponse = Type.Object({
  success: Type.Boolean(),
  job_id: Type.String(),
  status: StringEnum(['completed', 'failed', 'cancelled']),
  results_deleted_at: DateTime({ description: 'When the data was deleted (the first deletion, on a repeat).' }),
});

/** A job id; a longer one is refused (400) before any lookup. */
const JobParams = Type.Object({ job_id: Type.String({ maxLength: 64 }) });

/** `POST/GET /api/v1/jobs`, `GET/DELETE /api/v1/jobs/{job_id}`, `GET /api/v1/jobs/{job_id}/results`. */
export function registerJobRoutes(app: ServiceApp, deps: EmailDeps, jobs: JobsService, options: { bodyLimit: number }): void {
  // Large JSON lists are parsed and prepared in a worker thread; everything else (and any
  // body that is not plainly well-formed) by the services' usual parser and validation.
  const reader = new ListReader();
  app.addHook('onClose', async () => reader.close());
  const usualJson = utf8JsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length < OFFLOAD_MIN_BYTES || request.method !== 'POST' || request.routeOptions.url !== '/api/v1/jobs') return usualJson(request, bytes, done);
    reader.read(bytes, jobs.chunkSize, request.headers['idempotency-key'] !== undefined).then(
      (r) => (r.kind === 'fallback' ? usualJson(request, bytes, done) : done(null, new OffloadedList(r))),
      (err: Error) => done(err),
    );
  });
  const compile = app.validatorCompiler;
  if (!compile) throw new Error('the service app has no validator compiler');

  app.post(
    '/api/v1/jobs',
    {
      bodyLimit: options.bodyLimit,
      // A list read in the worker thread was checked there against the same shape.
      validatorCompiler: (route) => {
        const check = compile(route) as ((data: unknown) => unknown) & { errors?: unknown };
        if (route.httpPart !== 'body') return check as never;
        const body = (data: unknown) => {
          if (data instanceof OffloadedList) return { value: data };
          const result = check(data);
          body.errors = check.errors; // Fastify reads a failed check's errors from the function itself
          return result;
        };
        body.errors = undefined as unknown;
        return body as never;
      },
      // A multipart body is read from its stream by the handler, which checks the form's
      // fields against UploadForm; the route's check sees no body (null, allowed by `nullable`).
      preValidation: async (request) => {
        if (request.isMultipart()) request.body = null;
        // No body at all (and no content type) skips the per-type body checks: refuse it here.
        else if (request.body === undefined || request.body === null) {
          throw new AppError('invalid_request', 'The body is missing: send JSON {"emails": [...]} or a multipart/form-data upload with a file.', { field: 'body' });
        }
      },
      schema: {
        tags: ['jobs'],
        summary: 'Submit up to 1,000,000 addresses for asynchronous verification',
        description:
          'Quota for the whole (deduped) list is reserved in the same transaction that stores the job, or the job is refused with 402 `insufficient_quota` (`remaining`, `required`) and nothing is stored or charged. ' +
          'The list is stored in chunks that workers verify in the background; poll `status_url`. ' +
          'With an `Idempotency-Key` header, a retry with the same key and body within 24 h returns the first answer (header `Idempotent-Replayed: true`) and creates no second job; the same key with another body is 409 `conflict`.',
        security: SECURED,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: 'Unique per request, 1–255 visible ASCII characters.' })) }),
        body: {
          content: {
            'application/json': { schema: SubmitBody },
            'multipart/form-data': { schema: { ...UploadForm, nullable: true } },
          },
        } as never,
        response: secured({
          202: withHeaders(SubmitResponse, IDEMPOTENT_REPLAYED),
          402: {
            ...Type.Object(
              {
                error: StringEnum(['insufficient_quota']),
                message: Type.String(),
                remaining: Type.Integer({ description: 'Units left this month.' }),
                required: Type.Integer({ description: 'Units the job needs (its total after dedupe).' }),
              },
              { additionalProperties: true },
            ),
            description: 'Not enough quota for the whole list; nothing stored or charged.',
          },
          ...errors(400, 401, 403, 409, 413, 415, 429, 500, 503),
        }),
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const plan = planOf(deps, principal.plan);
      let source: JobSource;
      let useSmtp: boolean;
      if (request.body instanceof OffloadedList) {
        const read = request.body.result;
        useSmtp = read.useSmtp;
        source = read.kind === 'problem' ? { problem: read.problem } : { list: read.list, fingerprint: read.hash };
      } else {
        let emails: string[];
        let dedupe: boolean;
        let input: InputRows | undefined;
        if (request.isMultipart()) {
          ({ emails, useSmtp, dedupe, input } = await readUpload(request, options.bodyLimit, checkUploadForm));
        } else {
          const body = request.body as Static<typeof SubmitBody>;
          emails = body.emails;
          useSmtp = body.use_smtp ?? false;
          dedupe = body.dedupe ?? false;
        }
        source = { emails, dedupe, ...(input ? { input } : {}) };
      }
      const outcome = await jobs.submitRequest(principal, plan, { source, useSmtp, idempotencyKey: request.headers['idempotency-key'] }, (answer) => reply.code(202).serialize(answer) as string);
      return sendIdempotent(reply, outcome, 202);
    },
  );

  app.get(
    '/api/v1/jobs',
    {
      schema: {
        tags: ['jobs'],
        summary: 'The 50 most recent jobs of the caller, newest first',
        security: SECURED,
        response: secured({ 200: Type.Object({ success: Type.Boolean(), jobs: Type.Array(JobListItem) }), ...errors(401, 429, 500) }),
      },
    },
    async (request) => {
      const rows = await jobs.list(request.principal!);
      return {
        success: true,
        jobs: rows.map((j) => ({
          job_id: j.id,
          status: j.status,
          total: j.total,
          processed: j.processed,
          valid_count: j.valid_count,
          invalid_count: j.invalid_count,
          risky_count: j.risky_count,
          unknown_count: j.unknown_count,
          created_at: j.created_at,
          completed_at: j.completed_at,
          results_deleted_at: j.results_deleted_at,
        })),
      };
    },
  );

  app.get(
    '/api/v1/jobs/:job_id',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Status and counters of one job',
        security: SECURED,
        params: JobParams,
        response: secured({ 200: JobStatusResponse, ...errors(400, 401, 404, 429, 500) }),
      },
    },
    async (request) => jobView(await jobs.get(request.principal!, request.params.job_id)),
  );

  app.delete(
    '/api/v1/jobs/:job_id',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Cancel a queued or processing job, refunding the unprocessed remainder',
        description:
          'Workers stop between and within chunks; a chunk in flight is dropped, not charged. The refund is exactly `total` − `processed` as of the cancel. ' +
          'A completed, failed or cancelled job is 409 `job_not_cancellable` (with its `status`).',
        security: SECURED,
        params: JobParams,
        response: secured({ 200: CancelResponse, ...errors(400, 401, 404, 409, 429, 500) }),
      },
    },
    async (request) => jobs.cancel(request.principal!, request.params.job_id),
  );

  app.get(
    '/api/v1/jobs/:job_id/results',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Results of a completed job: JSON pages, or the whole job as CSV',
        description:
          `Results keep the input order. \`format=csv\` streams every row as RFC 4180 CSV (CRLF line ends) with the header \`${CSV_HEADER}\`; page parameters are ignored. ` +
          'A job uploaded as a CSV file comes back as that file: each row as the file spelled it (padded with empty cells to its widest row), the result columns appended; a result column named like an input column is prefixed `result_` (extension). ' +
          "Every CSV cell — result cells, the file's own cells and its header — that starts with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'` so that a spreadsheet shows it instead of running it (`-5` and `+1 555 0100` too); that is the one change to the file's spelling, and `formulas=keep` turns it off (extension). " +
          '`status` keeps only rows with those statuses and `columns=all` adds the sub-checks, in both forms (extensions). ' +
          'Before completion: 409 `job_not_completed` with `status` and `progress_pct`; after `DELETE …/results` or the retention period: 410 `results_deleted`.',
        security: SECURED,
        params: JobParams,
        querystring: Type.Object({
          format: Type.Optional(StringEnum(['json', 'csv'], { default: 'json' })),
          page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: '1-based; at most 1,000,000 (a job of 1,000,000 addresses one a page). Infinity, 1e309 and the like: 400.' })),
          per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 1000 })),
          status: Type.Optional(
            Type.String({
              maxLength: 200,
              description: 'Comma-separated statuses to keep (`valid`, `invalid`, `risky`, `unknown`), e.g. `valid,risky`; another value is 400 naming `status`. With JSON, pages run over the kept rows.',
              'x-extension': true,
            }),
          ),
          columns: Type.Optional(
            StringEnum(['default', 'all'], {
              default: 'default',
              description: `\`all\` adds ${EXTRA_COLUMNS.map((c) => `\`${c}\``).join(', ')} after the contract's columns (CSV columns, JSON fields).`,
              'x-extension': true,
            }),
          ),
          formulas: Type.Optional(
            StringEnum(['escape', 'keep'], {
              default: 'escape',
              description:
                "CSV only. `escape`: a cell starting with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'` (spreadsheet formula injection). " +
                '`keep`: every cell exactly as sent and as verified, for a file read by a program rather than a spreadsheet. Another value is 400 naming `formulas`.',
              'x-extension': true,
            }),
          ),
        }),
        response: secured({
          200: {
            description: 'A page of results (JSON), or the whole job (CSV).',
            headers: { 'Content-Disposition': Type.String({ description: 'With `format=csv`: `attachment; filename="<job_id>.csv"` (with `status`: `<job_id>-valid-risky.csv` and the like).' }) },
            content: {
              'application/json': { schema: ResultsResponse },
              'text/csv': { schema: Type.String({ description: `RFC 4180, header row \`${CSV_HEADER}\` (after a CSV upload's own columns, with \`columns=all\` the sub-checks after it).` }) },
            },
          },
          ...errors(400, 401, 404, 409, 410, 429, 500),
        }),
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const { job_id: id } = request.params;
      const query = { statuses: parseStatusFilter(request.query.status), all: request.query.columns === 'all', keepFormulas: request.query.formulas === 'keep' };
      if (request.query.format === 'csv') {
        const rows = await jobs.csv(principal, id, query);
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${id}${query.statuses ? `-${[...query.statuses].join('-')}` : ''}.csv"`)
          .send(Readable.from(rows) as never);
      }
      const page = request.query.page ?? 1;
      const perPage = request.query.per_page ?? 1000;
      const { job, matched, results } = await jobs.page(principal, id, page, perPage, query);
      return reply.type('application/json; charset=utf-8').send({ success: true, job_id: job.id, status: job.status, total: job.total, page, per_page: perPage, matched, results });
    },
  );

  app.delete(
    '/api/v1/jobs/:job_id/results',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Delete a finished job’s addresses and results (extension)',
        description:
          'For a completed, failed or cancelled job: its addresses, results and a CSV upload’s rows are deleted; the job, its status and its counters stay (`results_deleted_at` is set). ' +
          'A repeat answers the same. A queued or processing job is 409 `job_not_completed` (cancel it first). Results are also deleted by the retention sweep `EMAIL_JOB_RETENTION_DAYS` after the job finished.',
        security: SECURED,
        params: JobParams,
        response: secured({ 200: DeleteResultsResponse, ...errors(400, 401, 404, 409, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => jobs.deleteResults(request.principal!, request.params.job_id),
  );
}
