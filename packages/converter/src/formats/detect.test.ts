import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fixture, tool } from '../testing/tools.js';
import { detectFormat } from './detect.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'conv-detect-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function detectBytes(bytes: Buffer | string, name: string): Promise<string | undefined> {
  const path = join(dir, `f-${Math.random().toString(36).slice(2)}`);
  await writeFile(path, bytes);
  return (await detectFormat(path, name))?.ext;
}

test('the fixtures are recognised from their bytes', async () => {
  const expected: Record<string, string> = {
    'sample.docx': 'docx', 'sample.xlsx': 'xlsx', 'sample.pptx': 'pptx', 'sample.png': 'png',
    'sample.wav': 'wav', 'sample.md': 'md', 'scanned-page.png': 'png',
  };
  for (const [name, ext] of Object.entries(expected)) {
    // No extension at all: the bytes alone decide (text falls back to plain text).
    const path = join(dir, `noext-${ext}`);
    await copyFile(fixture(name), path);
    const found = await detectFormat(path, ext === 'md' ? name : undefined);
    assert.equal(found?.ext, ext, name);
  }
});

test('zip containers are told apart by their content, not their name', async () => {
  // A docx uploaded as "report.xlsx" is still a docx.
  const docx = await readFile(fixture('sample.docx'));
  assert.equal(await detectBytes(docx, 'report.xlsx'), 'docx');
  const xlsx = await readFile(fixture('sample.xlsx'));
  assert.equal(await detectBytes(xlsx, 'anything.bin'), 'xlsx');
});

test('a zip that is no office file is an archive (issue 12); a truncated zip is unsupported', async () => {
  const txt = join(dir, 'a.txt');
  await writeFile(txt, 'hi');
  const zipPath = join(dir, 'plain.zip');
  tool('/usr/bin/python3', ['-m', 'zipfile', '-c', zipPath, txt]);
  const plainZip = await readFile(zipPath);
  assert.equal(plainZip.subarray(0, 2).toString(), 'PK');
  assert.equal(await detectBytes(plainZip, 'a.docx'), 'zip');
  const docx = await readFile(fixture('sample.docx'));
  assert.equal(await detectBytes(docx.subarray(0, 2000), 'broken.docx'), undefined);
});

test('magic numbers win over the extension', async () => {
  const png = await readFile(fixture('sample.png'));
  assert.equal(await detectBytes(png, 'photo.jpg'), 'png');
  assert.equal(await detectBytes(Buffer.from('%PDF-1.7\n%%EOF\n'), 'x.txt'), 'pdf');
  assert.equal(await detectBytes(Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBPVP8 '), Buffer.alloc(20)]), 'x'), 'webp');
  assert.equal(await detectBytes(Buffer.from('{\\rtf1\\ansi hello}'), 'x.txt'), 'rtf');
});

test('text formats: HTML by content, then the extension breaks the tie, plain text otherwise', async () => {
  assert.equal(await detectBytes('<!DOCTYPE html><html><body>x</body></html>', 'page.txt'), 'html');
  assert.equal(await detectBytes('a,b\n1,2\n', 'data.csv'), 'csv');
  assert.equal(await detectBytes('# Title\n\ntext\n', 'notes.md'), 'md');
  assert.equal(await detectBytes('# Title\n\ntext\n', 'notes.markdown'), 'md');
  assert.equal(await detectBytes('just words\n', 'notes.weird'), 'txt');
  assert.equal(await detectBytes('just words\n', undefined as unknown as string), 'txt');
});

test('binary junk and invalid UTF-8 are unsupported', async () => {
  assert.equal(await detectBytes(Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00]), 'x.txt'), undefined);
  assert.equal(await detectBytes(Buffer.from([0x61, 0xc3, 0x28, 0x62]), 'x.txt'), undefined);
  assert.equal(await detectBytes(Buffer.alloc(0), 'empty.txt'), undefined);
});
