import { PassThrough } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { PAGE_OPTION_NAMES, PDF_ARCHIVE_OPTION_NAMES, PDF_FORM_OPTION_NAMES, PDF_MARKUP_OPTION_NAMES, quote, SIGN_OPTION_NAMES, VIDEO_OPTION_NAMES } from '@mailconv/converter';
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
  // Without a boundary the body cannot be split into parts (busboy would throw a plain Error: a 500 before, issue #13).
  if (!/;\s*boundary=("[^"]+"|[^;\s]+)/i.test(request.headers['content-type'] ?? '')) {
    throw new AppError('invalid_request', 'The multipart/form-data Content-Type needs a boundary parameter (let your HTTP client set the header).');
  }
  // A body that cannot fit on the storage volume is refused before it is read (issue 28).
  const declared = Number(request.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared > 0) await service.assertRoomForUpload(declared);
  const form: MultipartForm = { upload: undefined, fields: {} };
  try {
    // Larger buffers between the socket and the store than busboy's 16 KiB: fewer, larger steps (issue 24's profile).
    const parts = request.parts({ fileHwm: 1024 * 1024, limits: { fileSize: Number.MAX_SAFE_INTEGER, files: 1, fields: 20, fieldSize: MAX_FIELD_BYTES, fieldNameSize: 100, parts: 25 } });
    for await (const part of parts) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw new AppError('invalid_request', `The file part must be named "file", not ${quote(part.fieldname)}.`, { field: fieldName(part.fieldname) });
        const guarded = endWithBody(request, part.file);
        try {
          form.upload = await service.upload(owner, part.filename, guarded.stream);
        } finally {
          guarded.stop();
        }
      } else {
        if (!allowed.includes(part.fieldname)) {
          throw new AppError('invalid_request', `${quote(part.fieldname)} is not a known field; fields are file, ${describeFields(allowed)}.`, { field: fieldName(part.fieldname) });
        }
        // busboy cuts a longer value silently; a cut value must never be used as if whole.
        if (part.valueTruncated || part.fieldnameTruncated) {
          throw new AppError('invalid_request', `The field ${quote(part.fieldname)} is longer than ${MAX_FIELD_BYTES} bytes.`, { field: fieldName(part.fieldname) });
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

/**
 * A body that ends inside a file part (no closing boundary) leaves busboy's file stream open
 * for ever, and the request with it. The file is read through a pass-through stream that is
 * failed ("unexpected end of form", 400) once the body is over and no byte came for a second.
 */
function endWithBody(request: FastifyRequest, file: NodeJS.ReadableStream): { stream: PassThrough; stop(): void } {
  const stream = new PassThrough();
  let lastData = Date.now();
  let ended = false;
  file.on('data', () => {
    lastData = Date.now();
  });
  file.on('end', () => {
    ended = true;
  });
  file.on('error', (e: Error) => stream.destroy(e));
  file.pipe(stream);
  let timer: NodeJS.Timeout | undefined;
  const watch = (): void => {
    timer ??= setInterval(() => {
      if (!ended && Date.now() - lastData > 1000) stream.destroy(new Error('Unexpected end of form'));
    }, 250);
  };
  const raw = request.raw;
  if (raw.readableEnded || raw.destroyed) watch();
  raw.once('end', watch);
  raw.once('close', watch);
  return {
    stream,
    stop: () => {
      clearInterval(timer);
      raw.off('end', watch);
      raw.off('close', watch);
    },
  };
}

/** The allowed fields in a sentence short enough for an error message: the page options of HTML sources as one group. */
function describeFields(allowed: readonly string[]): string {
  // Option families are named, not listed one by one: the message stays short (at most 400 characters).
  const page = new Set<string>(PAGE_OPTION_NAMES);
  const video = new Set<string>(VIDEO_OPTION_NAMES);
  // PDF targets' options, issue 25's forms, redaction and page marks, signatures, PDF/A and PDF/UA among them.
  const pdf = new Set<string>(['remove_active_content', 'compression', 'rotate', 'watermark', 'set_password', 'title', 'author', ...PDF_FORM_OPTION_NAMES, ...PDF_MARKUP_OPTION_NAMES, ...SIGN_OPTION_NAMES, ...PDF_ARCHIVE_OPTION_NAMES]);
  const plain = allowed.filter((n) => !page.has(n) && !video.has(n) && !pdf.has(n));
  const families = [
    ...(allowed.some((n) => pdf.has(n)) ? ['the PDF options (watermark, set_password, form_data, redact, sign, pdfa, …)'] : []),
    ...(allowed.some((n) => video.has(n)) ? ['the video options (start, duration, …)'] : []),
    ...(allowed.some((n) => page.has(n)) ? ['the page options of HTML sources (paper, margin, …)'] : []),
  ];
  return families.length ? `${plain.join(', ')}, ${families.slice(0, -1).join(', ')}${families.length > 1 ? ' and ' : ''}${families.at(-1)}` : plain.join(', ');
}

/** Longest text field value accepted, in bytes. */
const MAX_FIELD_BYTES = 4096;

/** A field name as the `field` member: as sent when short and printable, else cut. */
function fieldName(name: string): string {
  return quote(name, 63).slice(1, -1);
}

/** busboy's messages for a body it cannot parse (they carry no code). */
const MALFORMED = /boundary|malformed|unexpected end of (form|multipart)|part terminated early|header/i;

/** @fastify/multipart's and busboy's own errors as codes of the closed list. */
export function multipartError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_FILES_LIMIT') return new AppError('invalid_request', 'Send one file per request.', { field: 'file' });
  if (typeof code === 'string' && code.startsWith('FST_')) return new AppError('invalid_request', `The multipart body is malformed or over its limits (${quote((err as Error).message, 80)}).`);
  if (code === undefined && err instanceof Error && MALFORMED.test(err.message)) {
    return new AppError('invalid_request', 'The multipart body is malformed; it could not be split into parts.');
  }
  return err;
}

/** Requires the file part. */
export function requireUpload(form: MultipartForm): UploadRow {
  if (!form.upload) throw new AppError('invalid_request', "'file' is required in the multipart body.", { field: 'file' });
  return form.upload;
}
