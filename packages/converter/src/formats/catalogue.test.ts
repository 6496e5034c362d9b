import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatInfo, normaliseExtension } from './catalogue.js';

// Issue #15 (found by the conversion service's property tests): an extension named like an
// Object.prototype member reached the prototype through the alias table and threw (a 500 at
// GET /api/v1/formats/__proto__/targets).
test('extensions named like Object.prototype members are just unknown extensions', () => {
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '.__proto__', 'CONSTRUCTOR']) {
    assert.equal(typeof normaliseExtension(name), 'string', name);
    assert.equal(formatInfo(name), undefined, name);
  }
  assert.equal(formatInfo('.JPEG')?.ext, 'jpg');
});
