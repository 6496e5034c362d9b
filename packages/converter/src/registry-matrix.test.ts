// Every pair the registry lists is converted here once, so `GET /formats/{ext}/targets`
// only ever lists tested pairs. One sample per source format is made from the fixtures by
// the engines themselves (or by the independent tools for the few nothing here writes),
// and every output must be recognised as its target format from its bytes.
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from './converter.js';
import { detectFormat } from './formats/detect.js';
import { makeExtraSamples } from './testing/extra-samples.js';
import { fixture, tool, scratchDir } from './testing/tools.js';

let dir: string;
let conv: Converter;
const samples = new Map<string, string>();

before(async () => {
  dir = await scratchDir('conv-matrix-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000, maxInputPixels: 4_000_000, libreoffice: { instances: 1 } });
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function make(from: string, to: string): Promise<void> {
  const r = await conv.convert({ inputPath: samples.get(from) as string, sourceFormat: from, targetFormat: to, outputPath: join(dir, 'samples', `sample.${to}`) });
  if (!r.ok) assert.fail(`making the ${to} sample from ${from}: ${JSON.stringify(r.error)}`);
  samples.set(to, r.output.path);
}

test('every listed pair converts, and the output is its target format', async () => {
  for (const [ext, file] of [['docx', 'sample.docx'], ['xlsx', 'sample.xlsx'], ['pptx', 'sample.pptx'], ['png', 'scanned-page.png'], ['wav', 'sample.wav'], ['md', 'sample.md']] as const) {
    samples.set(ext, fixture(file));
  }
  // A half-second 64×48 clip with sound; a Photoshop file and an EPUB (nothing here writes them).
  const mp4 = join(dir, 'clip.mp4');
  tool('/usr/bin/ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=0.5:size=64x48:rate=5', '-f', 'lavfi', '-i', 'sine=duration=0.5:sample_rate=8000',
    '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', mp4]);
  samples.set('mp4', mp4);
  const psd = join(dir, 'sample.psd');
  tool('/usr/bin/convert', [fixture('sample.png'), psd]);
  samples.set('psd', psd);
  const epub = join(dir, 'sample.epub');
  tool('/usr/bin/pandoc', [fixture('sample.md'), '--metadata', 'title=Sample', '-o', epub]);
  samples.set('epub', epub);
  for (const t of ['doc', 'odt', 'rtf', 'txt', 'pdf']) await make('docx', t);
  for (const t of ['xls', 'ods', 'csv']) await make('xlsx', t);
  for (const t of ['ppt', 'odp']) await make('pptx', t);
  for (const t of ['jpg', 'webp', 'gif', 'tiff', 'avif', 'bmp', 'ico', 'ppm']) await make('png', t);
  for (const t of ['mp3', 'flac', 'ogg', 'opus', 'm4a']) await make('wav', t);
  for (const t of ['webm', 'mkv', 'mov', 'avi']) await make('mp4', t);
  for (const t of ['html', 'rst', 'org', 'tex']) await make('md', t);
  // Issue 12's formats: one sample each, made by independent tools (testing/extra-samples.ts);
  // a pair whose source must be shaped for its target (a contact table → vCard) has its own.
  const extra = await makeExtraSamples(join(dir, 'extra'));
  for (const [key, file] of extra) samples.set(key, file);

  const pairs = conv.registry.pairs();
  const failures: string[] = [];
  let n = 0;
  for (const { from, to } of pairs) {
    const input = samples.get(`${from}>${to}`) ?? samples.get(from);
    if (!input) {
      failures.push(`${from}: no sample`);
      continue;
    }
    const out = join(dir, 'out', `${n++}-${from}.${to}`);
    const r = await conv.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out });
    if (!r.ok) {
      failures.push(`${from} → ${to}: ${r.error.code} ${r.error.detail ?? r.error.message}`);
      continue;
    }
    // Binary targets are recognised by their magic numbers or containers; text targets must
    // be valid UTF-8 text (HTML by its content), the name only breaking the text tie.
    // (OCR of a page shrunk to an icon may find no text: an empty .txt is a valid answer.)
    const emptyText = to === 'txt' && r.output.size_bytes === 0;
    const found = await detectFormat(out, `output.${to}`);
    if (found?.ext !== to && !emptyText) failures.push(`${from} → ${to}: output detected as ${found?.ext ?? 'nothing'}`);
    if ((await readFile(out)).length !== r.output.size_bytes) failures.push(`${from} → ${to}: size mismatch`);
  }
  assert.deepEqual(failures, []);
  assert.ok(pairs.length > 1100, `${pairs.length} pairs`);
});
