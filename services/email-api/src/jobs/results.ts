import { parse } from 'csv-parse/sync';
import { AppError } from '@mailconv/platform';
import { STATUSES, type Status, type VerificationResult } from '@mailconv/verifier';
import type { JobState } from '../db/schema.js';

/**
 * How job results are read (issue 23): the stored row, the columns of the two forms, the
 * status filter and the names of the result columns beside a CSV upload's own. Pure.
 */

/**
 * One stored result row: the contract's `[email, status, reason, score, suggestion]`
 * (`is_valid` is `status == "valid"`), then the sub-checks of `columns=all`: normalized,
 * syntax, dns, mx_count, mx_provider, smtp, catch_all, disposable, role_based,
 * free_provider. Rows stored before the sub-checks were kept have only the first five.
 */
export type StoredResult = [
  email: string,
  status: VerificationResult['status'],
  reason: VerificationResult['reason'],
  score: number | null,
  suggestion: string | null,
  normalized?: string,
  syntax?: boolean,
  dns?: boolean,
  mx_count?: number,
  mx_provider?: string | null,
  smtp?: boolean | null,
  catch_all?: boolean | null,
  disposable?: boolean,
  role_based?: boolean,
  free_provider?: boolean,
];

/** The contract's result columns, in order. */
export const RESULT_COLUMNS = ['email', 'is_valid', 'status', 'reason', 'score', 'suggestion'] as const;
/** Header row of the CSV download (contract). */
export const CSV_HEADER = RESULT_COLUMNS.join(',');
/** What `columns=all` adds after the contract's columns, in order (stored at positions 5…14). */
export const EXTRA_COLUMNS = ['normalized', 'syntax', 'dns', 'mx_count', 'mx_provider', 'smtp', 'catch_all', 'disposable', 'role_based', 'free_provider'] as const;

/** States after which a job's data may be deleted. */
export const FINAL_STATES: readonly JobState[] = ['completed', 'failed', 'cancelled'];

/** Which rows and columns a results request asks for. */
export interface ResultsQuery {
  /** Statuses to keep; null: every row. */
  statuses: ReadonlySet<Status> | null;
  /** `columns=all`: the sub-checks too. */
  all: boolean;
  /** `formulas=keep` (CSV): every cell as sent, none neutralised ({@link neutraliseFormula}). */
  keepFormulas?: boolean;
}

/** A JSON result item: the contract's fields, plus the sub-checks with `columns=all`. */
export type ResultItem = {
  email: string;
  is_valid: boolean;
  status: Status;
  reason: VerificationResult['reason'];
  score: number | null;
  suggestion: string | null;
} & Partial<Record<(typeof EXTRA_COLUMNS)[number], string | number | boolean | null>>;

/** The `status` query parameter: comma-separated contract statuses; anything else is 400 naming `status`. */
export function parseStatusFilter(value: string | undefined): ReadonlySet<Status> | null {
  if (value === undefined) return null;
  const wanted = new Set<Status>();
  for (const part of value.split(',')) {
    const name = part.trim();
    if (!(STATUSES as readonly string[]).includes(name)) {
      throw new AppError('invalid_request', `status must be a comma-separated list of ${STATUSES.join(', ')}; "${name.slice(0, 40)}" is not one.`, { field: 'status' });
    }
    wanted.add(name as Status);
  }
  return wanted;
}

export const matches = (r: StoredResult, query: ResultsQuery): boolean => query.statuses === null || query.statuses.has(r[1]);

/** The value at stored position `5 + i` of {@link EXTRA_COLUMNS}; null on a row stored without sub-checks. */
const extra = (r: StoredResult, i: number): string | number | boolean | null => (r[5 + i] as string | number | boolean | null | undefined) ?? null;

export function resultItem(r: StoredResult, all: boolean): ResultItem {
  const item: ResultItem = { email: r[0], is_valid: r[1] === 'valid', status: r[1], reason: r[2], score: r[3], suggestion: r[4] };
  if (all) EXTRA_COLUMNS.forEach((name, i) => (item[name] = extra(r, i)));
  return item;
}

/** What a spreadsheet takes as the start of a formula (OWASP's CSV-injection advice). */
const FORMULA_CHARS = '=+\\-@\\t\\r';
const FORMULA_START = new RegExp(`^[${FORMULA_CHARS}]`);
/** A record with no field (after spaces) starting with a quote or a formula character needs no scan. */
const MAYBE_FORMULA = new RegExp(`(?:^|,) *["${FORMULA_CHARS}]`);

/**
 * The one rule for every cell a CSV download writes (result cells since the start, a CSV
 * upload's own cells and header since issue 45): a text that a spreadsheet would run as a
 * formula — it starts with `=`, `+`, `-`, `@`, a tab or a CR — gets a leading `'`, so it is
 * shown instead. Lists come from sign-up forms, and invalid addresses are echoed as given.
 * By first character only: `-5` and `+1 555 0100` get the `'` too. JSON results stay exact.
 */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * One CSV field per RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes
 * doubled; text neutralised ({@link neutraliseFormula}) unless `keepFormulas`.
 */
export function csvField(v: string | number | boolean | null, keepFormulas = false): string {
  if (v === null) return '';
  let s = String(v);
  if (typeof v === 'string' && !keepFormulas) s = neutraliseFormula(s);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** The result cells of one CSV row (no line end). */
export function csvRow(r: StoredResult, all: boolean, keepFormulas = false): string {
  const f = (v: string | number | boolean | null) => csvField(v, keepFormulas);
  let out = `${f(r[0])},${r[1] === 'valid'},${r[1]},${f(r[2])},${f(r[3])},${f(r[4])}`;
  if (all) for (let i = 0; i < EXTRA_COLUMNS.length; i++) out += `,${f(extra(r, i))}`;
  return out;
}

/**
 * A CSV upload's record (or header) as the file spelled it, with {@link neutraliseFormula}
 * applied to each cell in place (issue 45): the `'` goes where the cell's text starts —
 * after the opening quote of a quoted cell, after the spaces that the upload's reader trims
 * — and nothing else of the record changes (quoting, spacing, line breaks inside quotes).
 * A cell is judged as a trimming reader sees it and as a strict one does: a tab before a
 * quoted cell gets its own `'`. Records come from the upload's parser, so quotes are
 * balanced; linear in the record's length, and most records are returned untouched.
 */
export function neutraliseRecord(raw: string): string {
  if (!MAYBE_FORMULA.test(raw)) return raw;
  let out = '';
  let i = 0;
  for (;;) {
    let p = i;
    while (raw[p] === ' ') p++;
    let q = p;
    while (raw[q] === ' ' || raw[q] === '\t') q++;
    let end: number;
    if (raw[q] === '"') {
      let close = q + 1;
      for (;;) {
        close = raw.indexOf('"', close);
        if (close < 0 || raw[close + 1] !== '"') break;
        close += 2;
      }
      if (close < 0) close = raw.length;
      end = raw.indexOf(',', close);
      if (end < 0) end = raw.length;
      out += `${raw.slice(i, p)}${neutraliseFormula(raw.slice(p, q))}"${neutraliseFormula(raw.slice(q + 1, close))}${raw.slice(close, end)}`;
    } else {
      end = raw.indexOf(',', p);
      if (end < 0) end = raw.length;
      out += `${raw.slice(i, p)}${neutraliseFormula(raw.slice(p, end))}`;
    }
    if (end >= raw.length) return out;
    out += ',';
    i = end + 1;
  }
}

/**
 * Names of the result columns of a download. Beside a CSV upload's own columns (its header
 * record), a name that equals an input column (case-insensitive, trimmed) takes a
 * `result_` prefix, again until it is unique: the input keeps its own names.
 */
export function resultColumnNames(all: boolean, inputHeader: string | null): string[] {
  const names: string[] = [...RESULT_COLUMNS, ...(all ? EXTRA_COLUMNS : [])];
  if (inputHeader === null) return names;
  const [cells = []] = parse(inputHeader, { relax_column_count: true, relax_quotes: true, trim: true }) as string[][];
  const taken = new Set(cells.map((c) => c.toLowerCase()));
  return names.map((name) => {
    let out = name;
    while (taken.has(out.toLowerCase())) out = `result_${out}`;
    taken.add(out.toLowerCase());
    return out;
  });
}
