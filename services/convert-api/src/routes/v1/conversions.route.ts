import { Type } from 'typebox';
import { AppError, formChecker, required, withHeaders, type ServiceApp } from '@mailconv/platform';
import { OPTION_NAMES, type ConversionService, type Owner } from '../../conversion/conversion.service.js';
import { ConversionRecordSchema, ConvertJsonBody, IdParams, MergeJsonBody, MultipartBody } from '../../conversion/schemas.js';
import { ownerOf, type ConvertDeps } from '../../deps.js';
import type { UploadRow } from '../../repositories/uploads.repository.js';
import { SECURED, errors, secured } from '../../schemas.js';
import { readMultipart, requireUpload } from './multipart.js';

const LOCATION = { Location: Type.String({ description: 'The conversion’s status URL (its `status_url`).' }) };

const FORM_FIELDS = ['target_format', 'webhook_url', 'export', ...OPTION_NAMES];

const WaitQuery = Type.Object(
  { wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 120, default: 30, description: 'Seconds to wait for the result before answering 202 (0–120, default 30).' })) },
  { additionalProperties: false },
);

/** The `wait` window when none is given, in seconds. */
const DEFAULT_WAIT_S = 30;

/** The multipart form checked against the schema the document shows for it. */
const checkForm = formChecker(MultipartBody);

/** Starts a conversion from a stored upload; a one-step upload is discarded if the request is refused. */
async function startFrom(service: ConversionService, owner: Owner, upload: UploadRow, fields: Record<string, unknown>, how: { form?: boolean; discard?: boolean }) {
  const { target_format: target, ...options } = fields;
  try {
    if (typeof target !== 'string' || target === '') throw new AppError('invalid_request', "'target_format' is required.", { field: 'target_format' });
    if (how.form) {
      checkForm({ ...fields, file: upload.id });
      // A form carries the export, form_data and metadata objects as JSON text.
      for (const field of ['export', 'form_data', 'metadata']) {
        if (typeof options[field] === 'string') options[field] = parseFormJson(field, options[field]);
      }
    }
    return await service.start(owner, upload, target, Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)));
  } catch (err) {
    if (how.form || how.discard) await service.discardUpload(upload);
    throw err;
  }
}

/** A form field holding JSON, or 400 naming it. */
function parseFormJson(field: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError('invalid_request', `'${field}' must be JSON text in a form.`, { field });
  }
}

/** A JSON request's conversion: of the caller's upload (`upload_id`) or of a URL fetched now (`url`, extension). */
async function startFromJson(service: ConversionService, owner: Owner, body: Record<string, unknown> | undefined) {
  // No body at all (no Content-Type, nothing sent): neither JSON nor a form.
  if (body === undefined || body === null) throw new AppError('invalid_request', 'Send JSON {upload_id or url, target_format, …} or a multipart form with file and target_format.', { field: 'target_format' });
  const { upload_id: uploadId, url, ...fields } = body as Record<string, unknown> & { upload_id?: string; url?: string };
  if ((uploadId === undefined) === (url === undefined)) throw new AppError('invalid_request', 'Give exactly one of upload_id and url.', { field: uploadId === undefined ? 'upload_id' : 'url' });
  if (url !== undefined) return startFrom(service, owner, await service.importUrl(owner, url), fields, { discard: true });
  return startFrom(service, owner, await service.findUpload(owner, uploadId!), fields, {});
}

/**
 * `POST /api/v1/convert` (wait window), `POST /api/v1/jobs` (202 at once), the two status
 * paths of the one record, and `DELETE /api/v1/jobs/{id}` (shred).
 */
export function registerConversionRoutes(app: ServiceApp, deps: ConvertDeps): void {
  const service = deps.conversions;

  app.post(
    '/api/v1/convert',
    {
      schema: {
        tags: ['conversion'],
        summary: 'Convert an upload (JSON with upload_id), a URL (JSON with url, extension) or a file sent along (multipart); waits up to `wait` seconds',
        description:
          'Charges one conversion against the monthly quota once the request is accepted: after the pair, the options and the upload\'s preflight ' +
          '(bomb limits — pixels, pages, duration, zip expansion, XML entities —, an encrypted PDF → 422 password_required, a page_range past the last page → 400). ' +
          'A conversion that fails or is shredded before it finishes is refunded. ' +
          'Finished within the window → 200 with the record, its output `sha256` and `download_token`; otherwise 202 with the record and a `Location` header naming its status URL.',
        security: SECURED,
        consumes: ['application/json', 'multipart/form-data'],
        querystring: WaitQuery,
        body: { content: { 'application/json': { schema: ConvertJsonBody }, 'multipart/form-data': { schema: MultipartBody } } },
        response: secured({ 200: ConversionRecordSchema, 202: withHeaders(ConversionRecordSchema, required(LOCATION)), ...errors(400, 401, 404, 410, 413, 415, 422, 429, 500, 503) }),
      },
    },
    async (request, reply) => {
      const owner = ownerOf(deps, request.principal!);
      await service.assertQuotaLeft(owner);
      let row;
      if (request.isMultipart()) {
        const form = await readMultipart(request, service, owner, FORM_FIELDS);
        row = await startFrom(service, owner, requireUpload(form), form.fields, { form: true });
      } else {
        row = await startFromJson(service, owner, request.body as Record<string, unknown> | undefined);
      }
      await service.waitFor(row.id, (request.query.wait ?? DEFAULT_WAIT_S) * 1000);
      const record = await service.record(await service.find(owner, row.id));
      if (record.status === 'queued' || record.status === 'processing') return reply.code(202).header('location', record.status_url).send(record);
      return record;
    },
  );

  app.post(
    '/api/v1/merge',
    {
      schema: {
        tags: ['conversion'],
        summary: 'Extension: merge several uploads (PDFs, documents, slides, sheets, images, HTML, …), in order, into one PDF (answers like POST /api/v1/convert)',
        description:
          'Extension (not in the contract; convert-decisions.md item 17). Converts each upload that is not a PDF to PDF first (while the request waits; each its own sandboxed conversion), ' +
          'then joins them losslessly (qpdf) into a new upload `merged.pdf` ' +
          'and starts a pdf → pdf conversion of it with the options given (page_range, presets, rotate, watermark, set_password, …), charged as one conversion. ' +
          'Refused before any charge: an unknown upload 404, a removed one 410, one that does not convert to PDF 422 unsupported_conversion, one that fails to 422 conversion_failed (naming the document), an encrypted PDF 422 password_required, ' +
          'too many pages 422 conversion_failed, a merged file over the plan’s size 413. The record’s `source` is the merged upload.',
        security: SECURED,
        querystring: WaitQuery,
        body: MergeJsonBody,
        response: secured({ 200: ConversionRecordSchema, 202: withHeaders(ConversionRecordSchema, required(LOCATION)), ...errors(400, 401, 404, 410, 413, 415, 422, 429, 500, 503) }),
      },
    },
    async (request, reply) => {
      const owner = ownerOf(deps, request.principal!);
      await service.assertQuotaLeft(owner);
      const { upload_ids: uploadIds, ...options } = request.body;
      const row = await service.merge(owner, uploadIds, Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)));
      await service.waitFor(row.id, (request.query.wait ?? DEFAULT_WAIT_S) * 1000);
      const record = await service.record(await service.find(owner, row.id));
      if (record.status === 'queued' || record.status === 'processing') return reply.code(202).header('location', record.status_url).send(record);
      return record;
    },
  );

  app.post(
    '/api/v1/jobs',
    {
      schema: {
        tags: ['conversion'],
        summary: 'Upload and convert in one step (multipart: file, target_format, options; or JSON with upload_id or url, extension); answers 202 at once',
        description:
          'Charges one conversion against the monthly quota (refunded if it fails or is shredded before it finishes); the upload passes the same preflight as POST /api/v1/convert. Poll GET /api/v1/jobs/{id} for the result. ' +
          'Extension: a JSON body is the same as POST /api/v1/convert’s (upload_id or url, target_format, options).',
        security: SECURED,
        consumes: ['multipart/form-data', 'application/json'],
        body: { content: { 'multipart/form-data': { schema: MultipartBody }, 'application/json': { schema: ConvertJsonBody } } },
        response: secured({ 202: withHeaders(ConversionRecordSchema, required(LOCATION)), ...errors(400, 401, 404, 410, 413, 415, 422, 429, 500, 503) }),
      },
    },
    async (request, reply) => {
      const owner = ownerOf(deps, request.principal!);
      await service.assertQuotaLeft(owner);
      let row;
      if (request.isMultipart()) {
        const form = await readMultipart(request, service, owner, FORM_FIELDS);
        row = await startFrom(service, owner, requireUpload(form), form.fields, { form: true });
      } else row = await startFromJson(service, owner, request.body as Record<string, unknown> | undefined);
      const record = await service.record(row);
      return reply.code(202).header('location', record.status_url).send(record);
    },
  );

  const status = (summary: string) => ({
    schema: { tags: ['conversion'], summary, security: SECURED, params: IdParams, response: secured({ 200: ConversionRecordSchema, ...errors(401, 404, 429, 500) }) },
  });
  app.get('/api/v1/convert/:id/status', status('A conversion’s status, output metadata, SHA-256 and download URL'), async (request) =>
    service.record(await service.find(ownerOf(deps, request.principal!), request.params.id)),
  );
  app.get('/api/v1/jobs/:id', status('A job’s record (the same record as GET /api/v1/convert/{id}/status)'), async (request) =>
    service.record(await service.find(ownerOf(deps, request.principal!), request.params.id)),
  );

  app.delete(
    '/api/v1/jobs/:id',
    {
      schema: {
        tags: ['conversion'],
        summary: 'Shred: cancel if running, remove the source upload and the output from disk, then answer',
        description: 'The record stays with status `shredded`; its downloads answer 410 gone. The source upload is removed even if another conversion uses it.',
        security: SECURED,
        params: IdParams,
        response: secured({ 200: ConversionRecordSchema, ...errors(401, 404, 429, 500) }),
      },
    },
    async (request) => {
      const owner = ownerOf(deps, request.principal!);
      return service.record(await service.shred(owner, request.params.id));
    },
  );
}
