import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSecretsKey, SecretBox } from './secret-box.js';

test('a sealed secret opens only with its key and its context, and says nothing of itself', () => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('AKIA-secret-value', 'cnv_1');
  assert.match(sealed, /^v1\.[0-9a-f]{8}\.[A-Za-z0-9+/=]+$/);
  assert.ok(!sealed.includes('secret'));
  assert.notEqual(box.seal('AKIA-secret-value', 'cnv_1'), sealed, 'a fresh IV every time');
  assert.equal(box.open(sealed, 'cnv_1'), 'AKIA-secret-value');
  assert.throws(() => box.open(sealed, 'cnv_2'), 'another record cannot open it');
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'cnv_1'), /another key/);
  const raw = Buffer.from(sealed.split('.')[2]!, 'base64');
  raw[raw.length - 1]! ^= 1;
  assert.throws(() => box.open(`v1.${sealed.split('.')[1]}.${raw.toString('base64')}`, 'cnv_1'), 'an altered value fails');
  assert.throws(() => box.open('plain text', 'cnv_1'), /not a sealed value/);
  assert.throws(() => new SecretBox(randomBytes(16)), RangeError);
});

test('the key file: made once (0600, folder 0700) and read back; hex or base64; anything else refused naming the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-'));
  try {
    const path = join(dir, 'keys', 'secrets.key');
    assert.throws(() => loadSecretsKey(path, false), /ENOENT/);
    const made = loadSecretsKey(path, true);
    assert.equal(made.length, 32);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'keys')).mode & 0o777, 0o700);
    assert.deepEqual(loadSecretsKey(path, true), made, 'a second start reads the same key');
    assert.equal(readFileSync(path, 'utf8').trim(), made.toString('hex'));
    const b64 = join(dir, 'b64.key');
    writeFileSync(b64, `${made.toString('base64')}\n`);
    assert.deepEqual(loadSecretsKey(b64, false), made);
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, 'too short');
    assert.throws(() => loadSecretsKey(bad, true), new RegExp(`${bad}: a secrets key is 32 bytes`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
