import type { FastifyRequest } from 'fastify';
import { AppError } from '@mailconv/platform';
import type { ConversionService, Owner } from '../../conversion/conversion.service.js';
import type { UploadRow } from '../../repositories/uploads.repository.js';

/** A multipart request read: the stored file (if any) and the text fields. */
export interface MultipartForm {
  upload: UploadRow | undefined;
  fields: Record<string, string>;
}

/**
 * Reads a multipart form part by part: the `file` part is streamed straight to storage
 * (hashed on the way, cut off at the plan's size), text fields are collected. Fields may
 * come before or after the file. Only `allowed` field names are accepted (400 naming the
 * first other one). A stored file is discarded again if the form turns out to be invalid.
 */
export async function readMultipart(request: FastifyRequest, service: ConversionService, owner: Owner, allowed: readonly string[]): Promise<MultipartForm> {
  if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the file as multipart/form-data with a part named "file".');
  const form: MultipartForm = { upload: undefined, fields: {} };
  try {
    const parts = request.parts({ limits: { fileSize: Number.MAX_SAFE_INTEGER, files: 1, fields: 20, fieldSize: 4096, parts: 25 } });
    for await (const part of parts) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw new AppError('invalid_request', `The file part must be named "file", not "${part.fieldname}".`, { field: part.fieldname });
        form.upload = await service.upload(owner, part.filename, part.file);
      } else {
        if (!allowed.includes(part.fieldname)) {
          throw new AppError('invalid_request', `'${part.fieldname}' is not a known field; fields are file, ${allowed.join(', ')}.`, { field: part.fieldname });
        }
        form.fields[part.fieldname] = String(part.value);
      }
    }
  } catch (err) {
    if (form.upload) await service.discardUpload(form.upload);
    throw multipartError(err);
  }
  return form;
}

/** @fastify/multipart's own errors as codes of the closed list. */
function multipartError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_FILES_LIMIT') return new AppError('invalid_request', 'Send one file per request.', { field: 'file' });
  if (typeof code === 'string' && code.startsWith('FST_')) return new AppError('invalid_request', `The multipart body is malformed or over its limits (${(err as Error).message}).`);
  return err;
}

/** Requires the file part. */
export function requireUpload(form: MultipartForm): UploadRow {
  if (!form.upload) throw new AppError('invalid_request', "'file' is required in the multipart body.", { field: 'file' });
  return form.upload;
}
