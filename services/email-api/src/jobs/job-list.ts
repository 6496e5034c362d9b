import { createHash } from 'node:crypto';

/** Most addresses one job holds (contract). */
export const MAX_JOB_EMAILS = 1_000_000;

/** Longest string accepted where an address is expected; longer is not an address (254 max) and is refused early. */
export const MAX_EMAIL_INPUT = 1024;

/** A submitted list made ready to store: counted, deduplicated if asked, cut into chunks. */
export interface PreparedList {
  /** Entries in the request. */
  submitted: number;
  /** Addresses to bill and verify. */
  total: number;
  /** Each chunk's addresses as the JSON text stored in `job_chunks.emails`. */
  chunks: string[];
  /** A CSV upload's own columns: header and width, and each chunk's raw records as the JSON text stored in `job_chunks.input_rows`. */
  input?: { header: string; width: number; chunks: string[] };
}

/**
 * A CSV upload's own columns (issue 23): the header record and one raw record text per
 * address (parallel to the addresses), each padded with empty cells to `width`.
 */
export interface InputRows {
  header: string;
  width: number;
  rows: readonly string[];
}

/** Why a list cannot become a job (400 naming `emails`). */
export interface ListProblem {
  problem: string;
}

/**
 * Decision: `dedupe` trims, drops empty entries and removes later case-insensitive
 * duplicates, keeping the first spelling in its place.
 */
export function dedupeEmails(emails: readonly string[]): string[] {
  return dedupeIndexes(emails).map((i) => emails[i]!.trim());
}

/** Positions of the entries `dedupeEmails` keeps (a CSV upload keeps those rows, the first of each address). */
function dedupeIndexes(emails: readonly string[]): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  emails.forEach((raw, i) => {
    const email = raw.trim();
    if (email === '') return;
    const key = email.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    out.push(i);
  });
  return out;
}

/**
 * The list a job stores (pure: runs on the event loop for small lists and in a worker
 * thread for large ones, with the same answers): empty entries are refused unless
 * `dedupe` drops them.
 */
export function prepareList(emails: readonly string[], dedupe: boolean, chunkSize: number, input?: InputRows): PreparedList | ListProblem {
  let list: readonly string[] = emails;
  let rows = input?.rows;
  if (dedupe) {
    const kept = dedupeIndexes(emails);
    list = kept.map((i) => emails[i]!.trim());
    if (rows) rows = kept.map((i) => input!.rows[i]!);
  } else {
    const empty = emails.findIndex((e) => e.trim() === '');
    if (empty >= 0) return { problem: `emails[${empty}] is empty; remove empty entries or send dedupe: true.` };
  }
  if (list.length === 0) return { problem: 'emails holds no address once empty entries are dropped.' };
  if (list.length > MAX_JOB_EMAILS) return { problem: `A job holds at most ${MAX_JOB_EMAILS} addresses; this one has ${list.length}.` };
  const chunks: string[] = [];
  for (let i = 0; i < list.length; i += chunkSize) chunks.push(JSON.stringify(list.slice(i, i + chunkSize)));
  const prepared: PreparedList = { submitted: emails.length, total: list.length, chunks };
  if (input && rows) {
    const rowChunks: string[] = [];
    for (let i = 0; i < rows.length; i += chunkSize) rowChunks.push(JSON.stringify(rows.slice(i, i + chunkSize)));
    prepared.input = { header: input.header, width: input.width, chunks: rowChunks };
  }
  return prepared;
}

/** What an `Idempotency-Key` is bound to: the route, the options and the list as sent (with an upload's own columns). */
export function submitHash(useSmtp: boolean, dedupe: boolean, emails: readonly string[], input?: InputRows): string {
  const hash = createHash('sha256').update(`jobs\n${useSmtp}\n${dedupe}\n${JSON.stringify(emails)}`);
  if (input) hash.update(`\n${input.header}\n${JSON.stringify(input.rows)}`);
  return hash.digest('hex');
}
