import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { allowSandboxTraversal, shareWithSandbox } from '@mailconv/converter';

/** Thrown by {@link FileStore.write} the moment a stream crosses its byte limit. */
export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`over ${limit} bytes`);
    this.name = 'TooLargeError';
  }
}

/** What was written: size and lowercase hex SHA-256, both computed as the bytes went by. */
export interface StoredFile {
  path: string;
  size_bytes: number;
  sha256: string;
}

/**
 * The storage folder (`CONVERT_STORAGE_DIR`): `uploads/<upl_id>`, `outputs/<cnv_id>.a<attempt>.<ext>`
 * and `work/` (the converter's scratch space). Paths derive from ids only, never from
 * client file names, so nothing a client sends can point outside the folder.
 */
export class FileStore {
  constructor(readonly root: string) {}

  /**
   * Creates the folders (mode 0700: files of all accounts live here). The sandboxed engines'
   * user may pass through the root (never list it) to reach its job folder under `work/`.
   */
  async init(): Promise<void> {
    for (const dir of ['uploads', 'outputs', 'work']) await mkdir(join(this.root, dir), { recursive: true, mode: 0o700 });
    await allowSandboxTraversal(this.root);
  }

  uploadPath(uploadId: string): string {
    return join(this.root, 'uploads', uploadId);
  }

  /** The output of one attempt of a conversion (attempt 0: records from before attempts were counted). */
  outputPath(conversionId: string, ext: string, attempt: number): string {
    return join(this.root, 'outputs', attempt > 0 ? `${conversionId}.a${attempt}.${ext}` : `${conversionId}.${ext}`);
  }

  get workDir(): string {
    return join(this.root, 'work');
  }

  /**
   * Streams `source` into `path`, hashing and counting on the way (one pass; the file is
   * never read back). Crossing `maxBytes` stops the copy at once, removes the partial file
   * and throws {@link TooLargeError}; any other failure removes it too.
   */
  async write(source: Readable, path: string, maxBytes: number): Promise<StoredFile> {
    const hash = createHash('sha256');
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > maxBytes) {
          cb(new TooLargeError(maxBytes));
          return;
        }
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    const out = createWriteStream(path, { mode: 0o600, flags: 'wx' });
    try {
      await pipeline(source, tap, out);
    } catch (err) {
      // The file may still be being opened when the copy fails: wait until the stream has
      // closed, or the removal could run first and the open create the file afterwards.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await rm(path, { force: true });
      throw err;
    }
    // Readable by the engines' group: the converter hard-links it into a job folder (no copy).
    await shareWithSandbox(path);
    return { path, size_bytes: size, sha256: hash.digest('hex') };
  }

  /** Removes a file; a file already gone is fine (shred and sweeper may race). */
  async remove(path: string | null | undefined): Promise<void> {
    if (path) await rm(path, { force: true });
  }
}
