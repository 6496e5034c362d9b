import type { ServiceApp } from '@mailconv/platform';
import { UploadAnswer, UploadBody } from '../../conversion/schemas.js';
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
        summary: 'Upload a file (multipart field "file"); answers its id, detected format and SHA-256',
        description: 'Not charged against the monthly quota. The upload is kept until its `expires_at` (CONVERT_RETENTION_HOURS) or until a conversion of it is shredded.',
        security: SECURED,
        consumes: ['multipart/form-data'],
        body: { content: { 'multipart/form-data': { schema: UploadBody } } },
        response: secured({ 201: UploadAnswer, ...errors(400, 401, 413, 415, 429, 500) }),
      },
    },
    async (request, reply) => {
      const form = await readMultipart(request, deps.conversions, ownerOf(deps, request.principal!), []);
      const upload = requireUpload(form);
      return reply.code(201).send({
        success: true,
        upload_id: upload.id,
        filename: upload.filename,
        format: upload.format,
        mime_type: upload.mime_type,
        size_bytes: upload.size_bytes,
        sha256: upload.sha256,
        expires_at: upload.expires_at,
      });
    },
  );
}
