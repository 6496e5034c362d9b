import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvRows, sha256FromDigest } from './files.js';
import { retryAfterSeconds } from './http.js';

async function* chunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

test('csvRows: quoted fields, doubled quotes, commas and line ends inside quotes, CRLF split across chunks, multi-byte characters', async () => {
  const text = 'email,note\r\n"a@b.test","say ""hi"", then\r\nleave"\r\nzoë@ü.test,\r\nlast,row';
  for (const size of [1, 2, 3, 7, 1000]) {
    const rows: string[][] = [];
    for await (const row of csvRows(chunks(text, size))) rows.push(row);
    assert.deepEqual(rows, [['email', 'note'], ['a@b.test', 'say "hi", then\r\nleave'], ['zoë@ü.test', ''], ['last', 'row']], `chunks of ${size}`);
  }
});

test('retryAfterSeconds: delta-seconds, an HTTP date, garbage', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  assert.equal(retryAfterSeconds('7', now), 7);
  assert.equal(retryAfterSeconds('Sun, 22 Nov 2026 10:00:30 GMT', now), 30);
  assert.equal(retryAfterSeconds('soon', now), undefined);
  assert.equal(retryAfterSeconds(null, now), undefined);
});

test('sha256FromDigest: Repr-Digest preferred, Digest accepted, hex out', () => {
  const hex = 'ab'.repeat(32);
  const b64 = Buffer.from(hex, 'hex').toString('base64');
  assert.equal(sha256FromDigest(new Headers({ 'repr-digest': `sha-256=:${b64}:` })), hex);
  assert.equal(sha256FromDigest(new Headers({ digest: `sha-256=${b64}` })), hex);
  assert.equal(sha256FromDigest(new Headers()), undefined);
});
