/**
 * Names people see, cleaned in one place: the download's file name (issue #13) and every entry
 * name of an archive the service writes, a batch's zip and a repacked archive (issue #45). No
 * folders in a file name, no control or bidirectional-override characters (U+202E could make
 * `exe.pdf` read as `fdp.exe`; ESC starts a terminal escape in `unzip -l`; CR LF splits a log
 * or CSV line), no NUL, at most 200 characters, never empty or a dot name.
 */
import { basename, extname } from 'node:path';

/** The C0 controls: `JSON.stringify` escapes these itself. */
const C0 = '\\u0000-\\u001f';
/** DEL, the C1 controls, the Unicode bidi marks, embeddings, overrides and isolates, line and paragraph separators, zero-width and BOM characters. */
const INVISIBLE = '\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff';
const UNSAFE = new RegExp(`[${C0}${INVISIBLE}]`, 'gu');
const UNSAFE_AFTER_JSON = new RegExp(`[${INVISIBLE}]`, 'gu');
const MAX_CHARS = 200;

/** A client's file name, or one segment of an entry name, made safe to store and to show; `file` when nothing is left. */
export function safeFilename(name: string): string {
  const base = basename(name.replace(UNSAFE, '').replace(/\\/g, '/')).trim();
  if (base === '' || base === '.' || base === '..') return 'file';
  const chars = [...base];
  if (chars.length <= MAX_CHARS) return base;
  // Keep the extension when cutting a long name.
  const ext = extname(base);
  const keep = ext.length > 0 && ext.length <= 16 ? ext : '';
  return chars.slice(0, MAX_CHARS - [...keep].length).join('') + keep;
}

/** An archive entry's `/`-separated name with {@link safeFilename} applied to each folder and to the file. */
export function safeEntryName(name: string): string {
  return name.split('/').map(safeFilename).join('/');
}

/**
 * `name`, or `name (2)`, `name (3)`, … before its extension, the first not in `taken`
 * (compared ignoring case, as the file systems people unpack onto do); added to `taken`.
 */
export function uniqueName(name: string, taken: Set<string>): string {
  const dot = extname(name);
  const stem = dot ? name.slice(0, -dot.length) : name;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? name : `${stem} (${n})${dot}`;
    if (taken.has(candidate.toLowerCase())) continue;
    taken.add(candidate.toLowerCase());
    return candidate;
  }
}

/**
 * `JSON.stringify` whose text holds none of the characters above, not even inside strings:
 * it escapes the C0 controls itself, and DEL, C1 and the bidi and invisible marks are written
 * as `\uXXXX` too. Parsing gives back the exact value.
 */
export function safeJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(UNSAFE_AFTER_JSON, escape);
}

/** A name as it may appear in a message: each unsafe character as `\uXXXX`. */
export function printableName(name: string): string {
  return name.replace(UNSAFE, escape);
}

function escape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
