import { createHash } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ChecksumError } from './http.js';

/** What {@link saveBody} wrote. */
export interface SavedFile {
  path: string;
  bytes: number;
  sha256: string;
}

/**
 * Streams a response body to `path` (never held whole in memory), hashing it on the way.
 * With `expectedSha256` the file is kept only if the hash matches: otherwise it is removed
 * and {@link ChecksumError} thrown. `onProgress` gets the bytes written so far.
 */
export async function saveBody(response: Response, path: string, expectedSha256?: string, onProgress?: (bytes: number) => void): Promise<SavedFile> {
  if (!response.body) throw new Error('the answer has no body');
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      onProgress?.(bytes);
      done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), meter, createWriteStream(path));
  } catch (err) {
    await rm(path, { force: true });
    throw err;
  }
  const sha256 = hash.digest('hex');
  if (expectedSha256 && sha256 !== expectedSha256.toLowerCase()) {
    await rm(path, { force: true });
    throw new ChecksumError(expectedSha256.toLowerCase(), sha256);
  }
  return { path, bytes, sha256 };
}

/** The hex SHA-256 of a `Digest: sha-256=<b64>` or `Repr-Digest: sha-256=:<b64>:` header, if any. */
export function sha256FromDigest(headers: Headers): string | undefined {
  const repr = /sha-256=:([A-Za-z0-9+/=]+):/i.exec(headers.get('repr-digest') ?? '');
  const digest = /sha-256=([A-Za-z0-9+/=]+)/i.exec(headers.get('digest') ?? '');
  const b64 = repr?.[1] ?? digest?.[1];
  return b64 ? Buffer.from(b64, 'base64').toString('hex') : undefined;
}

/** A file on disk as an upload part: file-backed (not read into memory), so a retry can send it again. */
export async function fileBlob(path: string, type = 'application/octet-stream'): Promise<{ blob: Blob; filename: string }> {
  return { blob: await openAsBlob(path, { type }), filename: basename(path) };
}

/**
 * The rows of an RFC 4180 CSV stream (quoted fields, doubled quotes, CRLF or LF), one array
 * per record, read chunk by chunk.
 */
export async function* csvRows(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let pendingQuote = false;
  let pendingCr = false;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(chunk, { stream: true });
    for (const c of text) {
      if (pendingQuote) {
        pendingQuote = false;
        if (c === '"') {
          field += '"';
          continue;
        }
        quoted = false;
      }
      if (quoted) {
        if (c === '"') pendingQuote = true;
        else field += c;
        continue;
      }
      if (pendingCr) {
        pendingCr = false;
        if (c === '\n') continue;
      }
      if (c === '"') quoted = true;
      else if (c === ',') {
        row.push(field);
        field = '';
      } else if (c === '\r' || c === '\n') {
        row.push(field);
        yield row;
        row = [];
        field = '';
        pendingCr = c === '\r';
      } else field += c;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    yield row;
  }
}
