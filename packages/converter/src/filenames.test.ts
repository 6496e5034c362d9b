// The one name cleaner (issues 13 and 45): download names, archive entry names, the manifest's JSON.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { printableName, safeEntryName, safeFilename, safeJson, uniqueName } from './filenames.js';

/** Every character the cleaner removes, one of each range's ends. */
const UNSAFE = ['\u0000', '\u0007', '\u001b', '\r', '\n', '\u007f', '\u0085', '\u009f', '\u061c', '\u200b', '\u200f', '\u2028', '\u2029', '\u202a', '\u202e', '\u2060', '\u2066', '\u2069', '\ufeff'];

describe('file and entry names', () => {
  test('controls, DEL and bidi marks leave a name; what is left is never empty or a dot name', () => {
    assert.equal(safeFilename('ctl\u001b[31mred.txt'), 'ctl[31mred.txt');
    assert.equal(safeFilename('a\r\nX-Injected: 1.txt'), 'aX-Injected: 1.txt');
    assert.equal(safeFilename('evil\u202etxt.exe'), 'eviltxt.exe');
    assert.equal(safeFilename(UNSAFE.join('')), 'file');
    assert.equal(safeFilename('.\u001b.'), 'file');
    assert.equal(safeFilename('dir/sub\\name.txt'), 'name.txt');
  });

  test('an entry name keeps its folders, each cleaned; a segment that cleans to a dot name cannot climb', () => {
    assert.equal(safeEntryName('docs\u202e/re\u0007port.docx'), 'docs/report.docx');
    assert.equal(safeEntryName('.\u001b./x.txt'), 'file/x.txt');
    assert.equal(safeEntryName('a/\u200b/b'), 'a/file/b');
  });

  test('a taken name, ignoring case, gets (2), (3) before its extension', () => {
    const taken = new Set(['report.pdf']);
    assert.equal(uniqueName('Report.pdf', taken), 'Report (2).pdf');
    assert.equal(uniqueName('report.pdf', taken), 'report (3).pdf');
    assert.equal(uniqueName('notes', taken), 'notes');
    assert.equal(uniqueName('notes', taken), 'notes (2)');
  });

  test('safeJson: not one unsafe character in the text, and the value read back exactly', () => {
    const value = { source: `x${UNSAFE.join('')}y`, list: [UNSAFE.join('|')] };
    const text = safeJson(value, 2);
    // The indentation's own line feeds aside.
    assert.doesNotMatch(text.replace(/\n/g, ''), new RegExp(`[${UNSAFE.join('')}]`, 'u'));
    assert.deepEqual(JSON.parse(text), value);
    assert.match(text, /"x\\u0000\\u0007\\u001b\\r\\n\\u007f\\u0085/);
    assert.equal(printableName('a\u001bb\u202ec'), 'a\\u001bb\\u202ec');
  });
});
