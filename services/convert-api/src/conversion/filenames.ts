/**
 * Client file names as stored and downloaded (issue #13): cleaned by the converter's one
 * cleaner (`safeFilename`, also applied to every entry name of the archives it writes, issue #45).
 */
import { extname } from 'node:path';
import { safeFilename } from '@mailconv/converter';

export { safeFilename };

/** `report.docx` → `report.pdf`, from an already safe name. */
export function outputFilename(source: string, ext: string): string {
  const safe = safeFilename(source);
  const stem = safe.slice(0, safe.length - extname(safe).length) || 'output';
  return `${stem}.${ext}`;
}
