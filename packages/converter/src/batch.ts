/**
 * Batches (option `batch`, extension, issue 24): the files inside an archive converted one by
 * one to one target format, delivered as a zip of the results plus a `manifest.json` that
 * says, for every file, its source, status, output name, SHA-256 and error. This module holds
 * the parts that are not the converter's own: walking the unpacked tree (files only: a link
 * or a special file refuses the archive), naming the outputs, the manifest and the zip.
 *
 * The archive is unpacked by the archive engine in the sandbox after the archive guard has
 * read its listing; each file is then a conversion of its own (its own job folder, bomb
 * checks and limits). The zip is written by the service with yazl from outputs the output
 * guard has already accepted: no engine touches it.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { failed } from './errors.js';
import { printableName, safeEntryName, safeJson, uniqueName } from './filenames.js';
import { formatInfo } from './formats/catalogue.js';
import { isArchiverJunk } from './guards/archive-guard.js';

/** A file of the unpacked archive. */
export interface BatchMember {
  /** Where it lies (in the job folder). */
  readonly path: string;
  /** Its name in the archive, `/`-separated. */
  readonly name: string;
  readonly size_bytes: number;
}

/** One line of `manifest.json`. */
export interface ManifestEntry {
  /** The file's name in the archive, exactly (its control and bidi characters `\u`-escaped in the JSON text). */
  readonly source: string;
  /** Its detected format, or null when it is not one the service reads. */
  readonly source_format: string | null;
  readonly source_size_bytes: number;
  readonly source_sha256: string;
  readonly status: 'completed' | 'failed';
  /** The converted file's name in the zip (cleaned, see {@link OutputNames}), or null. */
  readonly output: string | null;
  readonly format: string | null;
  readonly size_bytes: number | null;
  readonly sha256: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** `manifest.json` of a batch's zip. */
export interface BatchManifest {
  readonly target_format: string;
  readonly files: number;
  readonly converted: number;
  readonly failed: number;
  readonly entries: readonly ManifestEntry[];
}

/** The name of the manifest in the zip; no converted file takes it. */
export const MANIFEST_NAME = 'manifest.json';

/**
 * The regular files of an unpacked archive, in name order, the archiver's metadata
 * (`__MACOSX/`, `.DS_Store`, …) left out. A link or a special file refuses the archive
 * (a batch converts files only), as do more than `maxFiles` files or none.
 */
export async function listBatchMembers(tree: string, ext: string, maxFiles: number): Promise<BatchMember[]> {
  const members: BatchMember[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir)) {
      const path = join(dir, entry);
      const name = prefix ? `${prefix}/${entry}` : entry;
      const st = await lstat(path);
      if (st.isDirectory()) await walk(path, name);
      else if (st.isSymbolicLink()) throw failed(`The ${ext} file holds a link (${clip(name)}); a batch converts files only.`);
      else if (!st.isFile()) throw failed(`The ${ext} file holds a special file (${clip(name)}); a batch converts files only.`);
      else if (!isArchiverJunk(name)) {
        members.push({ path, name, size_bytes: st.size });
        if (members.length > maxFiles) throw tooMany(ext, maxFiles);
      }
    }
  };
  await walk(tree, '');
  if (!members.length) throw failed(`The ${ext} file holds no file to convert.`);
  return members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The refusal of an archive with more files than a batch converts. */
export function tooMany(ext: string, maxFiles: number): Error {
  return failed(`The ${ext} file holds more than ${maxFiles} files; a batch converts at most ${maxFiles}.`);
}

/**
 * Names of the converted files: the source's path, cleaned like a download's name (no
 * control or bidi characters, issue #45), with the target's extension (`docs/report.docx` →
 * `docs/report.pdf`); a name already taken (ignoring case, as the file systems people unzip
 * onto do), by another file or by one that cleaned to the same, gets ` (2)`, ` (3)`, … before
 * its extension.
 */
export class OutputNames {
  private readonly taken = new Set<string>([MANIFEST_NAME]);

  name(source: string, ext: string): string {
    const clean = safeEntryName(source);
    const dot = extname(clean);
    return uniqueName(`${dot ? clean.slice(0, -dot.length) : clean}.${ext}`, this.taken);
  }
}

/** SHA-256 (hex) of a file. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/**
 * Writes the batch's zip: the converted files in manifest order (stored as they are when
 * their format is already compressed), then `manifest.json`. ZIP64 where sizes need it.
 */
export async function writeBatchZip(zipPath: string, files: ReadonlyArray<{ path: string; name: string; format: string }>, manifest: BatchManifest): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const file of files) zip.addFile(file.path, file.name, { compress: !ALREADY_COMPRESSED.has(formatInfo(file.format)?.family ?? '') });
  // The sources' own names stay in the manifest, but no control or bidi byte does (issue #45).
  zip.addBuffer(Buffer.from(`${safeJson(manifest, 2)}\n`), MANIFEST_NAME);
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath, { mode: 0o600 }));
}

/** Families whose files deflate gains nothing on. */
const ALREADY_COMPRESSED = new Set(['image', 'audio', 'video', 'archive']);

/** A name as it appears in a message: at most 100 characters, its control and bidi characters escaped. */
function clip(name: string): string {
  return printableName(name.length > 100 ? `${name.slice(0, 97)}…` : name);
}
