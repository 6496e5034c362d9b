import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter } from './converter.js';
import { packageFile } from './engines/engine.js';
import { pdfPages, tool } from './testing/tools.js';

// Real .docx files from other projects' test suites (test/corpus/NOTICE.md), each to PDF
// through the warm pool, as the service runs them: every one must convert and give a PDF
// that poppler reads. Documents with Word comments crash the warm instance (LibreOffice 7.4)
// and must still convert, through the one-off fallback, which the engine chain names.
const CORPUS = packageFile('test/corpus/docx');
const CRASHING = ['mammoth-comments.docx', 'python-docx-comments-rich-para.docx'];

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'corpus-'));
  converter = await Converter.create({ workDir: join(work, 'jobs'), libreoffice: { instances: 1 } });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

test('every real .docx of the corpus converts to a PDF poppler reads; comment documents through the one-off fallback', { timeout: 600_000 }, async () => {
  const files = (await readdir(CORPUS)).filter((f) => f.endsWith('.docx')).sort();
  assert.ok(files.length >= 40, `${files.length} documents`);
  const failures: string[] = [];
  for (const file of files) {
    const out = join(work, `${file}.pdf`);
    const r = await converter.convert({ inputPath: join(CORPUS, file), sourceFormat: 'docx', targetFormat: 'pdf', outputPath: out });
    if (!r.ok) {
      failures.push(`${file}: ${r.error.message} (${r.error.detail ?? ''})`);
      continue;
    }
    assert.ok(pdfPages(out) >= 1, file);
    assert.deepEqual(r.engines, [CRASHING.includes(file) ? 'libreoffice-cold' : 'libreoffice'], file);
  }
  assert.deepEqual(failures, []);
  // The fallback keeps the text: the comment document's body survives.
  const text = tool('/usr/bin/pdftotext', [join(work, 'mammoth-comments.docx.pdf'), '-']);
  assert.match(text, /Ouch/);
});
