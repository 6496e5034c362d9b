import type { ServiceApp } from '@mailconv/platform';
import { UploadAnswer, UploadBody, UploadUrlBody } from '../../conversion/schemas.js';
import { ownerOf, type ConvertDeps } from '../../deps.js';
import { SECURED, errors, secured } from '../../schemas.js';
import { readMultipart, requireUpload } from './multipart.js';

/** `POST /api/v1/upload`: the first of the two-step flow (upload, then convert). */
export function registerUploadRoutes(app: ServiceApp, deps: ConvertDeps): void {
  app.post(
    '/api/v1/upload',
    {
      schema: {
        tags: ['conversion'],
        summary: 'Upload a file (multipart field "file"), or import one from a URL (JSON {url}, extension); answers its id, detected format and SHA-256',
        description:
          'Not charged against the monthly quota. The upload is kept until its `expires_at` (CONVERT_RETENTION_HOURS) or until a conversion of it is shredded. ' +
          'Extension (issue 24): a JSON body {url, filename?, headers?} has the service fetch the file through its egress guard, stored and hashed like any upload.',
        security: SECURED,
        consumes: ['multipart/form-data', 'application/json'],
        body: { content: { 'multipart/form-data': { schema: UploadBody }, 'application/json': { schema: UploadUrlBody } } },
        response: secured({ 201: UploadAnswer, ...errors(400, 401, 413, 415, 422, 429, 500) }),
      },
    },
    async (request, reply) => {
      const owner = ownerOf(deps, request.principal!);
      let upload;
      if (request.isMultipart()) upload = requireUpload(await readMultipart(request, deps.conversions, owner, []));
      else {
        const body = request.body as { url: string; filename?: string; headers?: Record<string, string> };
        upload = await deps.conversions.importUrl(owner, body.url, { ...(body.filename ? { filename: body.filename } : {}), ...(body.headers ? { headers: body.headers } : {}) });
      }
      return reply.code(201).send({
        success: true,
        upload_id: upload.id,
        filename: upload.filename,
        format: upload.format,
        mime_type: upload.mime_type,
        size_bytes: upload.size_bytes,
        sha256: upload.sha256,
        expires_at: upload.expires_at,
        ...(upload.source_url ? { source_url: upload.source_url } : {}),
      });
    },
  );
}
