/**
 * The format catalogue: every extension the converter reads or writes, its MIME type and
 * family. The entries are data in `formats/data/<group>.ts`; this module holds the types and
 * the look-ups. Extensions are the canonical ids (`jpg`, not `jpeg`); {@link normaliseExtension}
 * maps aliases.
 */
import { ENTRIES } from './data/index.js';

/** Families group formats for presets, options and the formats listing. */
export type FormatFamily =
  | 'document'
  | 'spreadsheet'
  | 'presentation'
  | 'image'
  | 'audio'
  | 'video'
  | 'ebook'
  | 'markup'
  | 'pdf'
  | 'text'
  // Families of formats other engines bring (issue 12); listed here so that data files can use them.
  | 'data'
  | 'subtitle'
  | 'contact'
  | 'calendar'
  | 'vector'
  | 'archive'
  | 'model'
  | 'font';

/**
 * One catalogue entry as the data files (`formats/data/*.ts`) write it. Whether a format is
 * readable or writable is not stated here: it follows from the engines and the proven pairs.
 */
export interface FormatEntry {
  /** The canonical extension, lower case, no dot. */
  readonly ext: string;
  /** Other extensions (and names) meaning the same format, mapped to `ext` on input. */
  readonly aliases?: readonly string[];
  readonly mime_type: string;
  readonly family: FormatFamily;
  readonly name: string;
  /** Paged formats: `page_range` applies, `pages` is reported. */
  readonly paged?: boolean;
}

/** One catalogue entry, as listed (`GET /formats`) and returned by detection. */
export type FormatInfo = Omit<FormatEntry, 'aliases'>;

const info = ({ aliases: _aliases, ...rest }: FormatEntry): FormatInfo => rest;

/** All formats, in listing order. */
export const FORMATS: readonly FormatInfo[] = ENTRIES.map(info);

const BY_EXT = new Map(FORMATS.map((f) => [f.ext, f]));

const ALIASES: ReadonlyMap<string, string> = new Map(ENTRIES.flatMap((e) => (e.aliases ?? []).map((a) => [a, e.ext] as const)));

/** Problems in the catalogue data (duplicate extensions, an alias naming a format); the tests want none. */
export function catalogueProblems(entries: readonly FormatEntry[] = ENTRIES): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const e of entries) {
    if (e.ext !== e.ext.toLowerCase() || e.ext.startsWith('.')) problems.push(`${e.ext}: extension must be lower case without a dot`);
    for (const name of [e.ext, ...(e.aliases ?? [])]) {
      const owner = seen.get(name);
      if (owner) problems.push(`${name}: listed by ${owner} and ${e.ext}`);
      seen.set(name, e.ext);
    }
  }
  return problems;
}

/** Lower-cases, strips a leading dot and maps aliases (`JPEG` → `jpg`). */
export function normaliseExtension(ext: string): string {
  const e = ext.trim().toLowerCase().replace(/^\./, '');
  return ALIASES.get(e) ?? e;
}

/** The catalogue entry for an extension or alias, if any. */
export function formatInfo(ext: string): FormatInfo | undefined {
  return BY_EXT.get(normaliseExtension(ext));
}
