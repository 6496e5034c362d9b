import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConvertConfig } from './config.js';

test('CONVERT_OCR_CONCURRENCY: a whole number 1–64 reaches the converter settings; anything else is refused naming it', () => {
  assert.equal(loadConvertConfig({}).ocrConcurrency, undefined);
  assert.equal(loadConvertConfig({ CONVERT_OCR_CONCURRENCY: '3' }).ocrConcurrency, 3);
  for (const bad of ['0', '-1', '2.5', 'many', '65']) {
    assert.throws(() => loadConvertConfig({ CONVERT_OCR_CONCURRENCY: bad }), /CONVERT_OCR_CONCURRENCY/, bad);
  }
});
