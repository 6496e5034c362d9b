import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FORMATS, catalogueProblems, formatInfo, normaliseExtension, type FormatEntry } from './catalogue.js';

test('the catalogue data has no duplicate extension or alias', () => {
  assert.deepEqual(catalogueProblems(), []);
  assert.equal(new Set(FORMATS.map((f) => f.ext)).size, FORMATS.length);
});

test('catalogueProblems names a clash between an alias and another format', () => {
  const entries: FormatEntry[] = [
    { ext: 'jpg', aliases: ['jpeg'], mime_type: 'image/jpeg', family: 'image', name: 'JPEG' },
    { ext: 'jpeg', mime_type: 'image/jpeg', family: 'image', name: 'JPEG again' },
    { ext: 'PNG', mime_type: 'image/png', family: 'image', name: 'PNG' },
  ];
  assert.deepEqual(catalogueProblems(entries), ['jpeg: listed by jpg and jpeg', 'PNG: extension must be lower case without a dot']);
});

test('aliases map to their format and are not listed themselves', () => {
  assert.equal(normaliseExtension('.JPEG'), 'jpg');
  assert.equal(normaliseExtension('tif'), 'tiff');
  assert.equal(formatInfo('htm')?.ext, 'html');
  assert.equal(formatInfo('markdown')?.mime_type, 'text/markdown');
  assert.ok(!('aliases' in (formatInfo('jpg') ?? {})));
  assert.equal(formatInfo('nope'), undefined);
});
