import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId, randomBase62 } from './ids.js';

test('ids carry their prefix, sort by creation time and do not repeat', () => {
  const a = newId('key', 1_700_000_000_000);
  const b = newId('key', 1_700_000_000_001);
  assert.match(a, /^key_[0-9a-z]{26}$/);
  assert.ok(a < b, `${a} should sort before ${b}`);
  const many = new Set(Array.from({ length: 10_000 }, () => newId('job')));
  assert.equal(many.size, 10_000);
});

test('randomBase62 uses the whole alphabet and only it', () => {
  const s = randomBase62(20_000);
  assert.equal(s.length, 20_000);
  assert.match(s, /^[0-9A-Za-z]+$/);
  assert.equal(new Set(s).size, 62);
});
