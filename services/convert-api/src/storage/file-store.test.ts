import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FileStore, TooLargeError } from './file-store.js';

let store: FileStore;
before(async () => {
  store = new FileStore(await mkdtemp(join(tmpdir(), 'file-store-')));
  await store.init();
});
after(async () => rm(store.root, { recursive: true, force: true }));

/** A stream in several chunks, as a network body arrives. */
const chunks = (data: Buffer, size = 1000) => Readable.from(Array.from({ length: Math.ceil(data.length / size) }, (_, i) => data.subarray(i * size, (i + 1) * size)));

test('write: size and SHA-256 computed on the way match the bytes; exactly the limit is accepted', async () => {
  const data = randomBytes(10_000);
  const path = store.uploadPath('upl_a');
  const stored = await store.write(chunks(data), path, 10_000);
  assert.equal(stored.size_bytes, 10_000);
  assert.equal(stored.sha256, createHash('sha256').update(data).digest('hex'));
  assert.deepEqual(await readFile(path), data);
});

test('write: one byte over the limit throws TooLargeError and leaves no partial file', async () => {
  const path = store.uploadPath('upl_b');
  await assert.rejects(store.write(chunks(randomBytes(10_001)), path, 10_000), TooLargeError);
  assert.equal(existsSync(path), false);
});
