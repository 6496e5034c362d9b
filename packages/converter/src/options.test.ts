import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConversionError } from './errors.js';
import { parseOcrLanguages, parseOptions, parsePageRange, qualityLadder, resolvePageRange } from './options.js';

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ConversionError);
    assert.equal(e.code, 'invalid_request');
    return e.extra.field;
  }
  assert.fail('expected invalid_request');
}

test('page ranges parse and resolve against the page count', () => {
  const spans = parsePageRange('1-3,5,8-');
  assert.deepEqual(spans, [{ from: 1, to: 3 }, { from: 5, to: 5 }, { from: 8, to: null }]);
  assert.deepEqual(resolvePageRange(spans, 10), [1, 2, 3, 5, 8, 9, 10]);
  assert.deepEqual(resolvePageRange(parsePageRange(' 2 - '), 3), [2, 3]);
  assert.equal(fieldOf(() => resolvePageRange(spans, 6)), 'page_range');
  for (const bad of ['', '0', '3-1', 'a', '1-2-3', '1,,2', '-4']) assert.equal(fieldOf(() => parsePageRange(bad)), 'page_range', bad);
});

test('OCR languages: three-letter codes, two-letter aliases, +-joined, de-duplicated', () => {
  assert.deepEqual(parseOcrLanguages('eng+deu'), ['eng', 'deu']);
  assert.deepEqual(parseOcrLanguages('en+zh+ja+chi_sim'), ['eng', 'chi_sim', 'jpn']);
  assert.equal(fieldOf(() => parseOcrLanguages('eng+klingon')), 'ocr_language');
  assert.equal(fieldOf(() => parseOcrLanguages('')), 'ocr_language');
});

test('options are validated with the offending field named', () => {
  assert.equal(fieldOf(() => parseOptions({ quality: 0 }, 'image')), 'quality');
  assert.equal(fieldOf(() => parseOptions({ quality: 101 }, 'image')), 'quality');
  assert.equal(fieldOf(() => parseOptions({ quality: 50.5 }, 'image')), 'quality');
  assert.equal(fieldOf(() => parseOptions({ max_output_bytes: -1 }, 'image')), 'max_output_bytes');
  assert.equal(fieldOf(() => parseOptions({ colour: 'red' }, 'image')), 'colour');
  assert.equal(fieldOf(() => parseOptions({ preset: 'nope' }, 'image')), 'preset');
  // thumbnail is an image preset, not a spreadsheet one
  assert.equal(fieldOf(() => parseOptions({ preset: 'thumbnail' }, 'spreadsheet')), 'preset');
  const ok = parseOptions({ quality: '40', preset: 'web', page_range: '1-2', ocr_language: 'de', max_output_bytes: '5000' }, 'pdf');
  assert.equal(ok.quality, 40);
  assert.equal(ok.preset?.name, 'web');
  assert.deepEqual(ok.ocrLanguages, ['deu']);
  assert.equal(ok.maxOutputBytes, 5000);
  assert.deepEqual(parseOptions({ quality: null, preset: undefined }, 'image'), {});
});

test('the size ladder steps quality down only when a size cap is set', () => {
  assert.deepEqual(qualityLadder({}, 85), [85]);
  assert.deepEqual(qualityLadder({ maxOutputBytes: 10 }, 85), [85, 75, 55, 40, 25, 10]);
  assert.deepEqual(qualityLadder({ maxOutputBytes: 10, quality: 50 }, 85), [50, 40, 25, 10]);
});
