/**
 * The checks a conversion passes before it is charged or queued (issue #13): the pair and
 * options (as before), then the upload itself through the converter's bomb checks — pixel
 * count, pages, duration, zip expansion, XML entities, an encrypted PDF — and a `page_range`
 * against the PDF's real page count. Refusals are 400 naming the field, 422, or 410 when
 * the upload was shredded meanwhile.
 */
import { access } from 'node:fs/promises';
import type { Converter, ConversionFailure, InputFacts } from '@mailconv/converter';
import { AppError } from '@mailconv/platform';
import type { UploadRow, UploadsRepository } from '../repositories/uploads.repository.js';

/** Throws the API error for an input that must not be converted; answers what the checks measured. */
export async function preflightUpload(
  converter: Converter,
  uploads: UploadsRepository,
  uploadPath: string,
  upload: UploadRow,
  targetFormat: string,
  rawOptions: Readonly<Record<string, unknown>>,
): Promise<InputFacts> {
  const checked = await converter.preflight(uploadPath, upload.format, targetFormat, rawOptions, upload.id);
  if (checked.ok) return checked.facts;
  // The upload may have been shredded while the request was on its way: that is 410, not a failed conversion.
  const present = await access(uploadPath).then(() => true, () => false);
  const row = await uploads.find(upload.account_id, upload.id);
  if (!present || row?.deleted_at) {
    throw new AppError('gone', `Upload ${upload.id} was removed (shredded or expired).`, { field: 'upload_id' });
  }
  throw failureError(checked.error);
}

/** A converter failure found before queueing, as the API's error. */
export function failureError(failure: ConversionFailure): AppError {
  if (failure.code === 'invalid_request') return new AppError('invalid_request', failure.message, failure.field ? { field: failure.field } : undefined);
  return new AppError(failure.code, failure.message);
}
