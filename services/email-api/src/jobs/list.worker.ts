import { isUtf8 } from 'node:buffer';
// The framing module alone: the whole platform is not loaded into the worker thread.
import { jsonNestingExceeds } from '@mailconv/platform/framing';
import { MAX_EMAIL_INPUT, MAX_JOB_EMAILS, prepareList, submitHash, type PreparedList } from './job-list.js';

/** A `POST /api/v1/jobs` JSON body to read off the event loop. */
export interface ListTask {
  body: Uint8Array;
  chunkSize: number;
  /** Compute the Idempotency-Key hash too. */
  withHash: boolean;
}

/** Options of a submit as read from the body. */
interface Read {
  useSmtp: boolean;
  dedupe: boolean;
  hash: string | null;
}

/**
 * `fallback`: not the plain well-formed shape (bad UTF-8 or JSON, a wrong type, an unknown
 * field, an entry over the length cap, …): the event loop parses and validates it as any
 * other body, so that errors are exactly the usual ones.
 */
export type ListTaskResult = { kind: 'fallback' } | ({ kind: 'problem'; problem: string } & Read) | ({ kind: 'ok'; list: PreparedList } & Read);

const FIELDS = new Set(['emails', 'use_smtp', 'dedupe']);
const optionalBoolean = (v: unknown) => v === undefined || typeof v === 'boolean';

/**
 * The piscina task (a worker thread): parses a large body, checks it has the schema's
 * shape, and prepares the list (dedupe, empty entries, chunks as stored JSON text) with
 * the same function the event loop uses for small bodies. What returns to the event loop
 * is the chunks' text, not a million strings.
 */
export default function readList(task: ListTask): ListTaskResult {
  const bytes = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  // Too deep a body goes back at once: the usual parser refuses it by shape, unparsed (issue
  // #15: 9 MB of nested arrays took 4.5 s to parse, and was then parsed again on the event loop).
  if (!isUtf8(bytes) || jsonNestingExceeds(bytes)) return { kind: 'fallback' };
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { kind: 'fallback' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { kind: 'fallback' };
  const fields = body as Record<string, unknown>;
  if (!Object.keys(fields).every((k) => FIELDS.has(k)) || !optionalBoolean(fields.use_smtp) || !optionalBoolean(fields.dedupe)) return { kind: 'fallback' };
  const emails = fields.emails;
  // `.length` counts UTF-16 units, never fewer than the schema's code points: anything near the cap goes the usual way.
  if (!Array.isArray(emails) || emails.length === 0 || emails.length > MAX_JOB_EMAILS || !emails.every((e) => typeof e === 'string' && e.length <= MAX_EMAIL_INPUT)) return { kind: 'fallback' };
  const read: Read = { useSmtp: (fields.use_smtp as boolean | undefined) ?? false, dedupe: (fields.dedupe as boolean | undefined) ?? false, hash: null };
  if (task.withHash) read.hash = submitHash(read.useSmtp, read.dedupe, emails as string[]);
  const list = prepareList(emails as string[], read.dedupe, task.chunkSize);
  return 'problem' in list ? { kind: 'problem', problem: list.problem, ...read } : { kind: 'ok', list, ...read };
}
