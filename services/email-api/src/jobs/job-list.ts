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
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of emails) {
    const email = raw.trim();
    if (email === '') continue;
    const key = email.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(email);
  }
  return out;
}

/**
 * The list a job stores (pure: runs on the event loop for small lists and in a worker
 * thread for large ones, with the same answers): empty entries are refused unless
 * `dedupe` drops them.
 */
export function prepareList(emails: readonly string[], dedupe: boolean, chunkSize: number): PreparedList | ListProblem {
  let list: readonly string[] = emails;
  if (dedupe) list = dedupeEmails(emails);
  else {
    const empty = emails.findIndex((e) => e.trim() === '');
    if (empty >= 0) return { problem: `emails[${empty}] is empty; remove empty entries or send dedupe: true.` };
  }
  if (list.length === 0) return { problem: 'emails holds no address once empty entries are dropped.' };
  if (list.length > MAX_JOB_EMAILS) return { problem: `A job holds at most ${MAX_JOB_EMAILS} addresses; this one has ${list.length}.` };
  const chunks: string[] = [];
  for (let i = 0; i < list.length; i += chunkSize) chunks.push(JSON.stringify(list.slice(i, i + chunkSize)));
  return { submitted: emails.length, total: list.length, chunks };
}

/** What an `Idempotency-Key` is bound to: the route, the options and the list as sent. */
export function submitHash(useSmtp: boolean, dedupe: boolean, emails: readonly string[]): string {
  return createHash('sha256').update(`jobs\n${useSmtp}\n${dedupe}\n${JSON.stringify(emails)}`).digest('hex');
}
