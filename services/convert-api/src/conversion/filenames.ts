/**
 * Client file names as stored and downloaded (issue #13): no folders, no control or
 * bidirectional-override characters (U+202E could make `exe.pdf` read as `fdp.exe`), no
 * NUL, at most 200 characters, never empty or a dot name.
 */
import { basename, extname } from 'node:path';

/** C0/C1 controls, DEL, and the Unicode bidi marks, embeddings, overrides and isolates, plus zero-width and BOM characters. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;
const MAX_CHARS = 200;

/** The client's file name made safe to store and to send back; `file` when nothing is left. */
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

/** `report.docx` → `report.pdf`, from an already safe name. */
export function outputFilename(source: string, ext: string): string {
  const safe = safeFilename(source);
  const stem = safe.slice(0, safe.length - extname(safe).length) || 'output';
  return `${stem}.${ext}`;
}
