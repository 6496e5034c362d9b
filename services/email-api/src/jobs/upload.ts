import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { FastifyRequest } from 'fastify';
import { AppError } from '@mailconv/platform';
import { MAX_EMAIL_INPUT, MAX_JOB_EMAILS, type InputRows } from './job-list.js';

/** A job submitted as an uploaded file, with the form fields that go with it. */
export interface UploadedList {
  emails: string[];
  /** A CSV file's own columns (none for a text file). */
  input?: InputRows;
  useSmtp: boolean;
  dedupe: boolean;
}

/** The addresses of a file and, for a CSV file, its own columns. */
export interface ExtractedList {
  emails: string[];
  input?: InputRows;
}

/** A CSV record as the file spells it: the line end (or a blank line before it) is not part of it. */
const recordText = (raw: string) => raw.replace(/^[\r\n]+|[\r\n]+$/g, '');

/** Feeds the parser 1 MiB at a time, so a large file is parsed across many event-loop turns. */
function* slices(buf: Buffer, size = 1 << 20): Generator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

function formBool(name: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0' || v === '') return false;
  throw new AppError('invalid_request', `${name} must be true or false.`, { field: name });
}

/**
 * The addresses of an uploaded list: a CSV file (RFC 4180; the column named by the form
 * field `column`, else the first one) or a text file (one address per line, chosen by a
 * `text/plain` type or a `.txt` name). A first row whose cell has no `@` is a header and
 * is skipped. Blank lines are ignored. A CSV file's records are kept as their raw text
 * (issue 23: the download returns them byte for byte with the result columns appended,
 * but for the `'` before a formula-looking cell, issue 45),
 * each padded with empty cells to the widest record; a file without a header row gets
 * `column_1,…` as its header.
 */
export async function extractAddresses(file: Buffer, kind: 'csv' | 'text', column: string | undefined): Promise<ExtractedList> {
  const out: string[] = [];
  const rows: string[] = [];
  const widths: number[] = [];
  let header: { text: string; width: number } | null = null;
  let index = column === undefined ? 0 : -1;
  let first = true;
  const take = (cells: string[], raw?: string) => {
    if (first) {
      first = false;
      if (column !== undefined) {
        index = cells.findIndex((c) => c.trim().toLowerCase() === column.trim().toLowerCase());
        if (index < 0) throw new AppError('invalid_request', `The file has no column named "${column}" in its first row.`, { field: 'column' });
        header = { text: recordText(raw ?? ''), width: cells.length };
        return;
      }
      if (!(cells[0] ?? '').includes('@')) {
        header = { text: recordText(raw ?? ''), width: cells.length };
        return;
      }
    }
    if (out.length >= MAX_JOB_EMAILS) throw new AppError('invalid_request', `A job holds at most ${MAX_JOB_EMAILS} addresses; the file has more.`, { field: 'file' });
    const cell = cells[index] ?? '';
    if (cell.length > MAX_EMAIL_INPUT) throw new AppError('invalid_request', `Row ${out.length + 1} holds ${cell.length} characters where an address is expected (at most ${MAX_EMAIL_INPUT}).`, { field: 'file' });
    out.push(cell);
    if (raw !== undefined) {
      rows.push(recordText(raw));
      widths.push(cells.length);
    }
  };
  if (kind === 'text') {
    let n = 0;
    for (const line of file.toString('utf8').replace(/^\uFEFF/, '').split(/\r?\n/)) {
      if (line.trim() === '') continue;
      take([line.trim()]);
      // Let other requests run between slices of a long file.
      if (++n % 50_000 === 0) await new Promise((r) => setImmediate(r));
    }
    return { emails: out };
  }
  const parser = Readable.from(slices(file)).pipe(parse({ bom: true, raw: true, relax_column_count: true, skip_empty_lines: true, trim: true }));
  try {
    let n = 0;
    for await (const { record, raw } of parser as AsyncIterable<{ record: string[]; raw: string }>) {
      take(record, raw);
      // The parser hands records over in microtasks: let other requests run now and then (as for text files).
      if (++n % 50_000 === 0) await new Promise((r) => setImmediate(r));
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('invalid_request', `The CSV file cannot be read: ${(err as Error).message}`, { field: 'file' });
  }
  return { emails: out, input: inputColumns(header, rows, widths) };
}

/**
 * Pads the header and every row with empty cells to the widest record, so the result
 * columns line up; a header row missing (or shorter than the rows) is named `column_<n>`.
 */
function inputColumns(header: { text: string; width: number } | null, rows: string[], widths: readonly number[]): InputRows {
  let width = header?.width ?? 0;
  for (const w of widths) if (w > width) width = w;
  const from = header?.width ?? 0;
  const names = Array.from({ length: width - from }, (_, i) => `column_${from + i + 1}`);
  const text = header ? [header.text, ...names].join(',') : names.join(',');
  for (let i = 0; i < rows.length; i++) if (widths[i]! < width) rows[i] += ','.repeat(width - widths[i]!);
  return { header: text, width, rows };
}

/**
 * Reads a `multipart/form-data` submission: one file part (any field name) plus optional
 * fields `use_smtp`, `dedupe` (`true`/`false`) and `column`, checked with `checkForm` (the
 * route's documented form schema).
 */
export async function readUpload(request: FastifyRequest, maxBytes: number, checkForm: (form: Record<string, unknown>) => unknown): Promise<UploadedList> {
  const fields: Record<string, string> = {};
  let file: { data: Buffer; kind: 'csv' | 'text' } | null = null;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 1024 } })) {
      if (part.type === 'file') {
        const data = await part.toBuffer();
        const kind = part.mimetype === 'text/plain' || /\.txt$/i.test(part.filename) ? 'text' : 'csv';
        file = { data, kind };
      } else {
        if (!['use_smtp', 'dedupe', 'column'].includes(part.fieldname)) throw new AppError('invalid_request', `Unknown form field ${part.fieldname}; expected a file and optionally use_smtp, dedupe, column.`, { field: part.fieldname });
        fields[part.fieldname] = String(part.value);
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const e = err as { code?: string; message?: string };
    if (e.code === 'FST_REQ_FILE_TOO_LARGE') throw new AppError('payload_too_large', `The uploaded file is over ${maxBytes} bytes.`);
    if (e.code === 'FST_FILES_LIMIT') throw new AppError('invalid_request', 'Upload one file per job.', { field: 'file' });
    throw new AppError('invalid_request', `The multipart body cannot be read: ${e.message ?? 'malformed'}`);
  }
  if (!file) throw new AppError('invalid_request', 'The form has no file: send the list as a CSV or text file part.', { field: 'file' });
  // The fields against the schema the document shows for the form (the file part stands in as "file").
  checkForm({ ...fields, file: '' });
  const { emails, input } = await extractAddresses(file.data, file.kind, fields.column === undefined || fields.column.trim() === '' ? undefined : fields.column);
  if (emails.length === 0) throw new AppError('invalid_request', 'The file holds no address.', { field: 'file' });
  return { emails, ...(input ? { input } : {}), useSmtp: formBool('use_smtp', fields.use_smtp ?? ''), dedupe: formBool('dedupe', fields.dedupe ?? '') };
}
