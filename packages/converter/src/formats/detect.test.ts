import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

test('binary junk and invalid UTF-8 with control bytes are unsupported; Latin-1 text is text (issue 12)', async () => {
  assert.equal(await detectBytes(Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00]), 'x.txt'), undefined);
  assert.equal(await detectBytes(Buffer.from([0x61, 0xc3, 0x01, 0x28, 0x62]), 'x.txt'), undefined);
  assert.equal(await detectBytes(Buffer.from([0x61, 0xc3, 0x28, 0x62, 0x1b, 0x5b]), 'x.txt'), undefined);
  // A Latin-1 CSV (rust-csv's uspop-latin1.csv has such names): text, by its extension.
  assert.equal(await detectBytes(Buffer.from('City,State\nSaint-J\xe9r\xf4me,QC\r\n', 'latin1'), 'cities.csv'), 'csv');
  assert.equal(await detectBytes(Buffer.from('Gr\xfc\xdfe aus M\xfcnchen\n', 'latin1'), 'note.txt'), 'txt');
  assert.equal(await detectBytes(Buffer.alloc(0), 'empty.txt'), undefined);
});

test('the raster long tail is recognised from the bytes ImageMagick writes, whatever the name (issue 12)', async () => {
  const coders: Record<string, string> = {
    dds: 'dds', fits: 'fits', pfm: 'pfm', ras: 'sun', sgi: 'sgi', xbm: 'xbm', xpm: 'xpm', pcx: 'pcx', pgm: 'pgm', pbm: 'pbm', pam: 'pam',
    jp2: 'jp2', j2k: 'j2k', hdr: 'hdr', miff: 'miff', dpx: 'dpx', xwd: 'xwd', viff: 'viff', mng: 'mng', jng: 'jng', psb: 'psb', vicar: 'vicar',
  };
  for (const [ext, coder] of Object.entries(coders)) {
    const path = join(dir, `tail.${ext}`);
    tool('/usr/bin/convert', [fixture('sample.png'), '-resize', '32x32', `${coder}:${path}`]);
    assert.equal(await detectBytes(await readFile(path), 'upload.bin'), ext, ext);
  }
  // No magic number: TGA and WBMP only when the name says so and the header is plausible.
  for (const ext of ['tga', 'wbmp']) {
    const path = join(dir, `tail.${ext}`);
    tool('/usr/bin/convert', [fixture('sample.png'), '-resize', '32x32', `${ext}:${path}`]);
    const bytes = await readFile(path);
    assert.equal(await detectBytes(bytes, `image.${ext}`), ext, ext);
    assert.equal(await detectBytes(bytes, 'image.bin'), undefined, `${ext} without its name`);
  }
  // A cursor is an icon directory of type 2; ImageMagick writes type 1 (an icon).
  const ico = await readFile(await (async () => {
    const p = join(dir, 'c.ico');
    tool('/usr/bin/convert', [fixture('sample.png'), '-resize', '32x32', p]);
    return p;
  })());
  assert.equal(await detectBytes(ico, 'x.cur'), 'ico');
  const cur = Buffer.from(ico);
  cur.writeUInt16LE(2, 2);
  assert.equal(await detectBytes(cur, 'x.ico'), 'cur');
});

test('e-books by their headers: Palm database types, MOBI version, LIT, LRF, RocketBook, TCR, SNB', async () => {
  const palm = (type: string, mobiVersion?: number): Buffer => {
    const b = Buffer.alloc(400);
    b.write(type, 60, 'latin1');
    b.writeUInt32BE(96, 78); // record 0 starts at 96
    if (mobiVersion !== undefined) {
      b.write('MOBI', 96 + 16, 'latin1');
      b.writeUInt32BE(mobiVersion, 96 + 36);
    }
    return b;
  };
  assert.equal(await detectBytes(palm('BOOKMOBI', 6), 'book.azw3'), 'mobi');
  assert.equal(await detectBytes(palm('BOOKMOBI', 8), 'book.mobi'), 'azw3');
  assert.equal(await detectBytes(palm('TEXtREAd'), 'book'), 'pdb');
  const pad = (head: Buffer | string): Buffer => Buffer.concat([Buffer.from(head as string, 'latin1'), Buffer.alloc(64)]);
  assert.equal(await detectBytes(pad('ITOLITLS'), 'x'), 'lit');
  assert.equal(await detectBytes(pad(Buffer.from([0x4c, 0, 0x52, 0, 0x46, 0, 0, 0])), 'x'), 'lrf');
  assert.equal(await detectBytes(pad(Buffer.from([0xb0, 0x0c, 0xb0, 0x0c, 2, 0, 0x4e, 0x55, 0x56, 0x4f])), 'x'), 'rb');
  assert.equal(await detectBytes(pad('!!8-Bit!!'), 'x'), 'tcr');
  assert.equal(await detectBytes(pad('SNBP000B'), 'x'), 'snb');
});

test('calibre zips (HTMLZ, TXTZ) and an XLSB workbook by their entries', async () => {
  const zipOf = async (name: string, files: Record<string, string>): Promise<Buffer> => {
    const sub = await mkdtemp(join(dir, 'zip-'));
    const paths: string[] = [];
    for (const [f, body] of Object.entries(files)) {
      await writeFile(join(sub, f), body);
      paths.push(join(sub, f));
    }
    const out = join(sub, name);
    tool('/usr/bin/python3', ['-c', 'import sys,zipfile,os\nz=zipfile.ZipFile(sys.argv[1],"w")\n[z.write(p, os.path.basename(p)) for p in sys.argv[2:]]', out, ...paths]);
    return readFile(out);
  };
  assert.equal(await detectBytes(await zipOf('a.zip', { 'index.html': '<html></html>', 'metadata.opf': '<package/>' }), 'a.zip'), 'htmlz');
  assert.equal(await detectBytes(await zipOf('b.zip', { 'index.txt': 'hello', 'metadata.opf': '<package/>' }), 'b.zip'), 'txtz');
  const xlsb = await readFile(fileURLToPath(new URL('../../test/corpus/xlsb/apachepoi_56011.xlsb', import.meta.url)));
  assert.equal(await detectBytes(xlsb, 'book.xlsx'), 'xlsb');
});

test('text formats by content: notebooks, DocBook, OPML, FB2, TEI, flat ODF, roff man pages (issue 12)', async () => {
  assert.equal(await detectBytes('{\n "cells": [],\n "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n', 'nb.json'), 'ipynb');
  // JSON that is no notebook is JSON (the data engine's), and XML that is no DocBook is XML.
  assert.equal(await detectBytes('{"a": 1}', 'x.ipynb'), 'json');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<!DOCTYPE article>\n<article xmlns="http://docbook.org/ns/docbook" version="5.0"><title>T</title></article>', 'a.xml'), 'dbk');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN" "x"><book/>', 'a.xml'), 'dbk');
  // The DocBook project's test documents: a glossary or bibliography root under the DTD; a
  // chapter with no doctype is DocBook by its .dbk name only (an XML file otherwise).
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<!DOCTYPE glossary PUBLIC "-//OASIS//DTD DocBook XML V4.4//EN" "x">\n<glossary/>', 'a.xml'), 'dbk');
  assert.equal(await detectBytes("<?xml version='1.0'?>\n<chapter lang='de' id='c'><title>T</title></chapter>", 'de.dbk'), 'dbk');
  assert.equal(await detectBytes("<?xml version='1.0'?>\n<chapter lang='de' id='c'><title>T</title></chapter>", 'de.xml'), 'xml');
  assert.equal(await detectBytes('<article><p>not docbook</p></article>', 'a.xml'), 'xml');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<!-- outline -->\n<opml version="2.0"><head/><body/></opml>', 'x.txt'), 'opml');
  assert.equal(await detectBytes('<?xml version="1.0" encoding="utf-8"?>\n<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"></FictionBook>', 'x'), 'fb2');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0"></TEI>', 'x'), 'tei');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet"></office:document>', 'x.xml'), 'fods');
  assert.equal(await detectBytes('.\\" a comment\n.TH LS 1\n.SH NAME\nls\n', 'ls.1'), 'man');
  assert.equal(await detectBytes('= Title\n\ntext\n', 'doc.adoc'), 'adoc');
  assert.equal(await detectBytes('h1. Title\n', 'doc.textile'), 'textile');
});
