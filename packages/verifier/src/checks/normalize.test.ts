import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSyntax } from './syntax.check.js';
import { normalizeEmail } from './normalize.js';

const norm = (s: string): string => normalizeEmail(s, checkSyntax(s));

test('decision 12: trimmed and lowercased; gmail and googlemail lose the +tag but keep dots', () => {
  assert.equal(norm('  John.Doe+News@Gmail.COM '), 'john.doe@gmail.com');
  assert.equal(norm('j.d+x+y@googlemail.com'), 'j.d@googlemail.com');
  assert.equal(norm('John+News@Example.com'), 'john+news@example.com');
  assert.equal(norm('+tag@gmail.com'), '+tag@gmail.com');
  assert.equal(norm('Info@Bücher.example'), 'info@bücher.example');
  assert.equal(norm('info@xn--bcher-kva.example'), 'info@bücher.example');
});

test('an address that fails the syntax check is only trimmed and lowercased', () => {
  assert.equal(norm(' Not An@Address '), 'not an@address');
});
