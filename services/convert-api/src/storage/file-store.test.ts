import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FileStore, TooLargeError } from './file-store.js';
import { OffThreadSha256 } from './off-thread-hash.js';

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

test('write: several rounds of the block ring (1 MiB blocks, hashed on the hashing thread) give the bytes and digest of the whole; uploads at once keep apart', async () => {
  // 5.5 MiB in 64 KiB chunks: the ring of 4 blocks goes round more than once, the last block partial.
  const a = randomBytes(5.5 * 1024 * 1024);
  const b = randomBytes(3 * 1024 * 1024 + 17);
  const [sa, sb] = await Promise.all([
    store.write(chunks(a, 64 * 1024), store.uploadPath('upl_ring_a'), 10 * 1024 * 1024),
    store.write(chunks(b, 10_000), store.uploadPath('upl_ring_b'), 10 * 1024 * 1024),
  ]);
  assert.deepEqual([sa.size_bytes, sa.sha256], [a.length, createHash('sha256').update(a).digest('hex')]);
  assert.deepEqual([sb.size_bytes, sb.sha256], [b.length, createHash('sha256').update(b).digest('hex')]);
  assert.ok((await readFile(sa.path)).equals(a));
  assert.ok((await readFile(sb.path)).equals(b));
});

test('write: a body that breaks off mid-way leaves no file, and the next upload is hashed right', async () => {
  const path = store.uploadPath('upl_broken');
  const broken = Readable.from((async function* () {
    yield randomBytes(3 * 1024 * 1024);
    throw new Error('client went away');
  })());
  await assert.rejects(store.write(broken, path, 10 * 1024 * 1024), /client went away/);
  assert.equal(existsSync(path), false);
  const data = randomBytes(2 * 1024 * 1024 + 1);
  const stored = await store.write(chunks(data, 50_000), store.uploadPath('upl_after'), 10 * 1024 * 1024);
  assert.equal(stored.sha256, createHash('sha256').update(data).digest('hex'));
});

test('the hashing thread: a stream opened on a thread that stopped gives no digest (never one of part of the bytes)', async () => {
  const hasher = new OffThreadSha256();
  const ring = new SharedArrayBuffer(16);
  new Uint8Array(ring).set(Buffer.from('0123456789abcdef'));
  const whole = hasher.start(ring);
  await whole.update(0, 16);
  assert.equal(await whole.digest(), createHash('sha256').update('0123456789abcdef').digest('hex'));
  const cut = hasher.start(ring);
  await cut.update(0, 8);
  await hasher.close();
  await assert.rejects(cut.update(8, 8), /lost this stream/);
  await assert.rejects(cut.digest(), /lost this stream/);
  await hasher.close();
});
