import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { allowSandboxTraversal, shareWithSandbox } from '@mailconv/converter';
import { OffThreadSha256 } from './off-thread-hash.js';

/** Bytes of an upload written and hashed at a time. */
const BLOCK_BYTES = 1024 * 1024;
/** Blocks of one upload's ring: one filling, the others being written or hashed (its memory: 4 MiB). */
const RING_BLOCKS = 4;

/** Writes all of `buffer` at the file's position (a short write goes on with the rest). */
async function writeAll(file: FileHandle, buffer: Uint8Array): Promise<void> {
  for (let done = 0; done < buffer.length; ) {
    const { bytesWritten } = await file.write(buffer, done, buffer.length - done);
    if (bytesWritten <= 0) throw new Error('the disk accepted no bytes');
    done += bytesWritten;
  }
}

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
  /** Hashes uploads off the main thread; shared by every write of this store. */
  private readonly hasher = new OffThreadSha256();

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
   *
   * The bytes are gathered into a ring of {@link RING_BLOCKS} blocks of {@link BLOCK_BYTES}
   * in memory shared with the hashing thread ({@link OffThreadSha256}): a full block is
   * written to disk and hashed there at the same time while the next one fills, so the main
   * thread only parses and copies, and nothing is allocated per block (issue 24's profile).
   */
  async write(source: Readable, path: string, maxBytes: number): Promise<StoredFile> {
    const ring = new SharedArrayBuffer(RING_BLOCKS * BLOCK_BYTES);
    const hash = this.hasher.start(ring);
    const busy: Array<Promise<unknown> | undefined> = new Array<Promise<unknown> | undefined>(RING_BLOCKS);
    let size = 0;
    const file = await open(path, 'wx', 0o600);
    try {
      let slot = 0;
      let filled = 0;
      let block = new Uint8Array(ring, 0, BLOCK_BYTES);
      // The writes go one after the other, in the file's order.
      let written: Promise<void> = Promise.resolve();
      const submit = async (): Promise<void> => {
        const data = block.subarray(0, filled);
        written = written.then(() => writeAll(file, data));
        const done = Promise.all([written, hash.update(slot * BLOCK_BYTES, filled)]);
        // Awaited when the slot comes round again, or at the end; a failure meanwhile is not left unhandled.
        done.catch(() => undefined);
        busy[slot] = done;
        slot = (slot + 1) % RING_BLOCKS;
        filled = 0;
        block = new Uint8Array(ring, slot * BLOCK_BYTES, BLOCK_BYTES);
        await busy[slot];
      };
      for await (const chunk of source as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) throw new TooLargeError(maxBytes);
        for (let at = 0; at < chunk.length; ) {
          const n = Math.min(BLOCK_BYTES - filled, chunk.length - at);
          block.set(chunk.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled === BLOCK_BYTES) await submit();
        }
      }
      if (filled) await submit();
      await Promise.all(busy);
      await file.close();
    } catch (err) {
      hash.drop();
      // Nothing may still be writing when the partial file is removed.
      await Promise.allSettled(busy);
      await file.close().catch(() => undefined);
      await rm(path, { force: true });
      throw err;
    }
    const sha256 = await hash.digest();
    // Readable by the engines' group: the converter hard-links it into a job folder (no copy).
    await shareWithSandbox(path);
    return { path, size_bytes: size, sha256 };
  }

  /** Removes a file; a file already gone is fine (shred and sweeper may race). */
  async remove(path: string | null | undefined): Promise<void> {
    if (path) await rm(path, { force: true });
  }
}
