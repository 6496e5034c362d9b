import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageSize } from './img2pdf.engine.js';

// Issue 12's corpus: a 5-pixel JPEG declaring 300 dpi is 1.2 pt wide, under the 3 pt a PDF
// page needs; img2pdf refused it. The image size is set only where the resolution is out.
test('img2pdf gets an image size only when the declared resolution puts the page outside 3–14,400 pt', () => {
  assert.deepEqual(imageSize({ width: 640, height: 480, density: 72 }), []);
  assert.deepEqual(imageSize({ width: 640, height: 480 }), []);
  assert.deepEqual(imageSize({ width: 5, height: 5, density: 300 }), ['--imgsize', '3.000ptx3.000pt']);
  assert.deepEqual(imageSize({ width: 5, height: 10, density: 300 }), ['--imgsize', '3.000ptx6.000pt']);
  assert.deepEqual(imageSize({ width: 300_000, height: 100, density: 1 }), ['--imgsize', '14400.000ptx4.800pt']);
});
