import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { netpbmArgs } from '../testing/extra-samples.js';
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

test('the older raster tail: PICT, SIXEL, PGX, Cineon, DCX, CALS, VIPS, Utah RLE by their bytes; the rest only by name with a header that fits', async () => {
  const write = async (coder: string, ext: string, extra: string[] = []): Promise<Buffer> => {
    const path = join(dir, `older.${ext}`);
    tool('/usr/bin/convert', [fixture('sample.png'), '-resize', '40x30', ...extra, `${coder}:${path}`]);
    return readFile(path);
  };
  const magic: Record<string, string> = { pict: 'pict', sixel: 'sixel', pgx: 'pgx', cin: 'cin', dcx: 'dcx', cals: 'cals', v: 'vips' };
  for (const [ext, coder] of Object.entries(magic)) assert.equal(await detectBytes(await write(coder, ext), 'upload.bin'), ext, ext);
  // Utah RLE is written by Netpbm (ImageMagick only reads it).
  const rle = join(dir, 'older.rle');
  tool('/bin/sh', netpbmArgs('rle', fixture('sample.png'), rle));
  assert.equal(await detectBytes(await readFile(rle), 'upload.bin'), 'rle');
  // A PICT without its 512-byte application header is one only by name.
  const pict = (await write('pict', 'pict')).subarray(512);
  assert.equal(await detectBytes(pict, 'clip.pct'), 'pict');
  assert.equal(await detectBytes(pict, 'clip.bin'), undefined);

  const named: Record<string, string> = { otb: 'otb', mtv: 'mtv', hrz: 'hrz', avs: 'avs', g3: 'g3', jbig: 'jbig', rgf: 'rgf' };
  for (const [ext, coder] of Object.entries(named)) {
    // HRZ samples are 6 bits (0–63): a picture without black is ASCII, hence this one has black.
    const bytes = await write(coder, ext, ext === 'hrz' ? ['-fill', 'black', '-draw', 'point 0,0'] : []);
    assert.equal(await detectBytes(bytes, `image.${ext}`), ext, ext);
    assert.equal(await detectBytes(bytes, 'image.bin'), undefined, `${ext} without its name`);
  }
  // Aliases name the same format.
  assert.equal(await detectBytes(await write('g3', 'g3'), 'page.fax'), 'g3');
  assert.equal(await detectBytes(await write('jbig', 'jbig'), 'scan.jbg'), 'jbig');
  // A name with bytes that do not fit it is not that format: a cut MTV, AVS or HRZ, a JBIG header with a non-zero reserved byte.
  for (const ext of ['mtv', 'avs', 'hrz', 'rgf', 'otb']) {
    const bytes = await write(ext, ext);
    assert.notEqual(await detectBytes(bytes.subarray(0, bytes.length - 7), `image.${ext}`), ext, `cut ${ext}`);
  }
  const jbig = Buffer.from(await write('jbig', 'jbig'));
  jbig[3] = 7;
  assert.equal(await detectBytes(jbig, 'scan.jbig'), undefined);
  assert.equal(await detectBytes(Buffer.from('just some words\n'), 'page.g3'), 'txt');
  // MacPaint and Palm, written by Netpbm.
  const palm = join(dir, 'older.palm');
  tool('/bin/sh', netpbmArgs('palm', fixture('sample.png'), palm));
  assert.equal(await detectBytes(await readFile(palm), 'icon.palm'), 'palm');
  assert.equal(await detectBytes(await readFile(palm), 'icon.bin'), undefined);
  const mac = join(dir, 'older.mac');
  tool('/bin/sh', netpbmArgs('mac', fixture('sample.png'), mac));
  assert.equal(await detectBytes(await readFile(mac), 'paint.mac'), 'mac');
  assert.equal(await detectBytes(await readFile(mac), 'paint.bin'), undefined);
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
  // Issue 21: markup inside the internal subset's entity values is not the root; a subset
  // longer than the head read leaves the DOCTYPE's name.
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<!DOCTYPE article PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN" "x" [\n<!ENTITY warn "<emphasis>Careful</emphasis>">\n]>\n<article><para>&warn;</para></article>', 'a.xml'), 'dbk');
  assert.equal(await detectBytes('<!DOCTYPE svg [<!ENTITY Viewport "<rect x=\'.5\' width=\'49\' height=\'29\'/>">]><svg xmlns="http://www.w3.org/2000/svg">&Viewport;</svg>', 'upload'), 'svg');
  assert.equal(await detectBytes(`<!DOCTYPE svg [${'<!ENTITY e "<g/>">'.repeat(400)}]><svg xmlns="http://www.w3.org/2000/svg"/>`, 'upload'), 'svg');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<!-- outline -->\n<opml version="2.0"><head/><body/></opml>', 'x.txt'), 'opml');
  assert.equal(await detectBytes('<?xml version="1.0" encoding="utf-8"?>\n<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"></FictionBook>', 'x'), 'fb2');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0"></TEI>', 'x'), 'tei');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet"></office:document>', 'x.xml'), 'fods');
  assert.equal(await detectBytes('.\\" a comment\n.TH LS 1\n.SH NAME\nls\n', 'ls.1'), 'man');
  assert.equal(await detectBytes('= Title\n\ntext\n', 'doc.adoc'), 'adoc');
  assert.equal(await detectBytes('h1. Title\n', 'doc.textile'), 'textile');
});

test('legacy Office files by their OLE2 directory, wherever the writer put it: a PowerPoint 97 file LibreOffice wrote, named .bin', { timeout: 120_000 }, async () => {
  const out = join(dir, 'ppt');
  tool('/usr/bin/soffice', [`-env:UserInstallation=file://${join(dir, 'lo-profile')}`, '--headless', '--convert-to', 'ppt', '--outdir', out, fixture('sample.pptx')]);
  const bytes = await readFile(join(out, 'sample.ppt'));
  // The stream names are not in the first 4 KiB of this file: the directory sector is read.
  assert.equal(bytes.subarray(0, 4096).includes(Buffer.from('PowerPoint Document', 'utf16le')), false);
  assert.equal(await detectBytes(bytes, 'upload.bin'), 'ppt');
  assert.equal(await detectBytes(bytes, 'deck.ppt'), 'ppt');
  // A header pointing past the end is no crash: the name decides, else unsupported.
  const broken = Buffer.from(bytes.subarray(0, 512));
  broken.writeUInt32LE(0x7ffffff0, 0x30);
  assert.equal(await detectBytes(broken, 'upload.bin'), undefined);
});

test('markup by content: JATS (doctype or dtd-version, not DocBook), POD, BibTeX; wiki dialects by name', async () => {
  const jatsDoctype = '<?xml version="1.0"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.2 20190208//EN" "JATS-archivearticle1.dtd">\n<article><front/></article>\n';
  assert.equal(await detectBytes(jatsDoctype, 'paper.xml'), 'jats');
  assert.equal(await detectBytes('<article xmlns:xlink="http://www.w3.org/1999/xlink" dtd-version="1.3" article-type="research-article"><front/></article>', 'paper'), 'jats');
  // A DocBook article is still DocBook; an <article> with neither marker is plain XML.
  assert.equal(await detectBytes('<article xmlns="http://docbook.org/ns/docbook" version="5.0"><title>t</title></article>', 'a.xml'), 'dbk');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<article><p>x</p></article>', 'a.xml'), 'xml');
  assert.equal(await detectBytes('=head1 NAME\n\nFoo - bar\n\n=cut\n', 'README'), 'pod');
  assert.equal(await detectBytes('=pod\n\nText.\n', 'x.txt'), 'pod');
  // A Perl script with POD inside is not a POD file.
  assert.equal(await detectBytes('#!/usr/bin/perl\nprint 1;\n\n=head1 NAME\n\nx\n', 'x.txt'), 'txt');
  assert.equal(await detectBytes('% refs\n@Article{knuth84,\n  author = {Knuth, Donald},\n  title = {Literate Programming}\n}\n', 'refs.txt'), 'bib');
  assert.equal(await detectBytes('@online{x, title={T}}', 'refs'), 'bib');
  assert.equal(await detectBytes('an e-mail @article{ is not at the start', 'x'), 'txt');
  for (const ext of ['haddock', 'tikiwiki', 'twiki', 'vimwiki']) assert.equal(await detectBytes('= Title =\n\ntext\n', `page.${ext}`), ext);
});

test('data by content and bytes: plists, GPX, KML, TCX, GeoJSON, CBOR; MessagePack, BSON, JSON5, properties by name and shape (issue 12)', async () => {
  const plist = '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0"><dict><key>a</key><integer>1</integer></dict></plist>\n';
  assert.equal(await detectBytes(plist, 'Info'), 'plist');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<gpx version="1.1" creator="x" xmlns="http://www.topografix.com/GPX/1/1"><wpt lat="1" lon="2"/></gpx>', 'track.xml'), 'gpx');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document/></kml>', 'places'), 'kml');
  assert.equal(await detectBytes('<?xml version="1.0"?>\n<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities/></TrainingCenterDatabase>', 'run.xml'), 'tcx');
  assert.equal(await detectBytes('{"type": "FeatureCollection", "features": []}', 'map.geojson'), 'geojson');
  assert.equal(await detectBytes('{"type": "Feature", "geometry": null, "properties": {}}', 'upload'), 'geojson');
  // Named .json it stays JSON; a bare geometry is just JSON.
  assert.equal(await detectBytes('{"type": "FeatureCollection", "features": []}', 'map.json'), 'json');
  assert.equal(await detectBytes('{"type": "Point", "coordinates": [1, 2]}', 'upload'), 'json');
  // CBOR's self-describe tag wins over any name; without it the name and a container header decide.
  assert.equal(await detectBytes(Buffer.from([0xd9, 0xd9, 0xf7, 0xa1, 0x61, 0x61, 0x01]), 'x.bin'), 'cbor');
  assert.equal(await detectBytes(Buffer.from([0xa1, 0x61, 0x61, 0x01]), 'x.cbor'), 'cbor');
  assert.equal(await detectBytes(Buffer.from([0x81, 0xa1, 0x61, 0x01]), 'x.msgpack'), 'msgpack');
  assert.equal(await detectBytes(Buffer.from([0x00, 0xff, 0x01]), 'x.msgpack'), undefined);
  // BSON: {"a": 1} — its int32 length must be the file's size.
  const bson = Buffer.from([0x0c, 0, 0, 0, 0x10, 0x61, 0, 1, 0, 0, 0, 0]);
  assert.equal(await detectBytes(bson, 'dump.bson'), 'bson');
  assert.equal(await detectBytes(Buffer.concat([bson, Buffer.from([0])]), 'dump.bson'), undefined);
  assert.equal(await detectBytes('{a: 1, // comment\n}', 'conf.json5'), 'json5');
  assert.equal(await detectBytes('{"a": 1}', 'conf.json5'), 'json5');
  assert.equal(await detectBytes('app.name = Demo\n', 'app.properties'), 'properties');
});

test('audio and video containers by their bytes, whatever the name (issue 12)', { timeout: 120_000 }, async () => {
  const ff = (args: string[], name: string): string => {
    const p = join(dir, name);
    tool('/usr/bin/ffmpeg', ['-v', 'error', '-y', ...args, p]);
    return p;
  };
  const tone = ['-f', 'lavfi', '-i', 'sine=duration=0.2:sample_rate=48000'];
  const card = ['-f', 'lavfi', '-i', 'testsrc=duration=0.2:size=64x48:rate=25', ...tone];
  const h264 = ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'];
  const cases: [string, string[]][] = [
    // Audio: raw streams (MPEG frame syncs vs layer III, AC-3 vs E-AC-3 by bsid) and containers.
    ['mp3', [...tone, '-c:a', 'libmp3lame', '-id3v2_version', '0', '-write_xing', '0', '-f', 'mp3']],
    ['mp2', [...tone, '-c:a', 'mp2', '-f', 'mp2']], ['aac', [...tone, '-c:a', 'aac', '-f', 'adts']],
    ['ac3', [...tone, '-c:a', 'ac3', '-f', 'ac3']], ['eac3', [...tone, '-c:a', 'eac3', '-f', 'eac3']],
    ['tta', [...tone, '-c:a', 'tta', '-f', 'tta']], ['wma', [...tone, '-c:a', 'wmav2', '-f', 'asf']],
    // Ogg by its first packet; Matroska by its track types.
    ['ogg', [...tone, '-c:a', 'libvorbis', '-f', 'ogg']], ['opus', [...tone, '-c:a', 'libopus', '-f', 'ogg']],
    ['oga', [...tone, '-c:a', 'flac', '-f', 'oga']], ['spx', [...tone, '-c:a', 'libspeex', '-f', 'spx']],
    ['ogv', [...card, '-c:v', 'libtheora', '-c:a', 'libvorbis', '-shortest', '-f', 'ogg']],
    ['mka', [...tone, '-c:a', 'libopus', '-f', 'matroska']], ['mkv', [...card, ...h264, '-f', 'matroska']],
    ['webm', [...card, '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-c:a', 'libopus', '-shortest', '-f', 'webm']],
    // ISO base media by brand.
    ['mp4', [...card, ...h264, '-f', 'mp4']], ['m4v', [...card, ...h264, '-f', 'ipod']], ['m4a', [...tone, '-c:a', 'aac', '-f', 'ipod']],
    ['3gp', [...card, ...h264, '-f', '3gp']], ['3g2', [...card, ...h264, '-f', '3g2']], ['f4v', [...card, ...h264, '-f', 'f4v']],
    // The rest by their magic.
    ['flv', [...card, ...h264, '-f', 'flv']], ['wmv', [...card, '-c:v', 'wmv2', '-c:a', 'wmav2', '-shortest', '-f', 'asf']],
    ['mpg', [...card, '-c:v', 'mpeg1video', '-c:a', 'mp2', '-shortest', '-f', 'mpeg']],
    ['ts', [...card, ...h264, '-f', 'mpegts']], ['m2ts', [...card, ...h264, '-mpegts_m2ts_mode', '1', '-f', 'mpegts']],
    ['mxf', [...card, '-c:v', 'mpeg2video', '-c:a', 'pcm_s16le', '-shortest', '-f', 'mxf']],
    ['nut', [...card, '-c:v', 'mpeg4', '-c:a', 'libmp3lame', '-shortest', '-f', 'nut']],
    ['y4m', [...card, '-an', '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe']],
    ['dv', ['-f', 'lavfi', '-i', 'testsrc=duration=0.2:size=720x576:rate=25', '-pix_fmt', 'yuv420p', '-c:v', 'dvvideo', '-f', 'dv']],
  ];
  for (const [ext, args] of cases) {
    const p = ff(args, `av-${ext}`);
    assert.equal((await detectFormat(p, 'upload.bin'))?.ext, ext, ext);
  }
  // Issue 31: a QuickTime movie without an ftyp box, as cameras write their Motion-JPEG MOVs
  // (leading wide/free atoms, then mdat or moov): ffmpeg's MOV with its ftyp renamed, so the
  // offsets inside stay right and ffmpeg still reads it.
  const mjpeg = ff([...card, '-c:v', 'mjpeg', '-c:a', 'pcm_s16le', '-shortest', '-f', 'mov'], 'av-mjpeg-mov');
  const faststart = ff([...card, '-c:v', 'mjpeg', '-c:a', 'pcm_s16le', '-shortest', '-movflags', '+faststart', '-f', 'mov'], 'av-mjpeg-moov-first');
  for (const [name, path, lead] of [['mdat after wide', mjpeg, 'wide'], ['moov first', faststart, 'free']] as const) {
    const bytes = await readFile(path);
    assert.equal(bytes.toString('latin1', 4, 8), 'ftyp');
    bytes.write(lead, 4, 'latin1');
    const classic = join(dir, `classic-${lead}.mov`);
    await writeFile(classic, bytes);
    assert.equal((await detectFormat(classic, 'upload.bin'))?.ext, 'mov', name);
    assert.match(tool('/usr/bin/ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', classic]), /mjpeg/, `${name}: ffmpeg reads it`);
  }
  // Near misses: a free atom followed by something else, a moov without a movie header.
  const atom = (size: number, type: string, body = Buffer.alloc(0)) => Buffer.concat([Buffer.from([size >>> 24, (size >>> 16) & 255, (size >>> 8) & 255, size & 255]), Buffer.from(type, 'latin1'), body]);
  assert.equal(await detectBytes(Buffer.concat([atom(8, 'free'), atom(24, 'abcd', Buffer.alloc(16))]), 'upload.bin'), undefined);
  assert.equal(await detectBytes(Buffer.concat([atom(24, 'moov', Buffer.concat([atom(16, 'zzzz', Buffer.alloc(8))]))]), 'upload.bin'), undefined);
  // ASF with video named .asf, an MPEG-2 program stream named .vob: the name breaks the tie.
  const wmv = join(dir, 'av-wmv');
  assert.equal((await detectFormat(wmv, 'clip.asf'))?.ext, 'asf');
  const vob = ff([...card, '-c:v', 'mpeg2video', '-c:a', 'ac3', '-shortest', '-f', 'vob'], 'av-vob');
  assert.equal((await detectFormat(vob, 'upload.bin'))?.ext, 'mpg');
  assert.equal((await detectFormat(vob, 'VTS_01_1.VOB'))?.ext, 'vob');
  // …but never overrides the bytes: an MP4 named .vob is an MP4.
  assert.equal((await detectFormat(join(dir, 'av-mp4'), 'clip.vob'))?.ext, 'mp4');
  // A DVD's first pack: MPEG-2 pack header, system header, then the navigation packet (0xBF).
  const pack = Buffer.concat([
    Buffer.from([0, 0, 1, 0xba, 0x44, 0, 4, 0, 4, 1, 0x01, 0x89, 0xc3, 0xf8]),
    Buffer.from([0, 0, 1, 0xbb, 0, 2, 0x80, 0x01]),
    Buffer.from([0, 0, 1, 0xbf, 0x03, 0xd4]), Buffer.alloc(980),
  ]);
  assert.equal(await detectBytes(pack, 'upload.bin'), 'vob');
  // Near misses: a TS sync byte that does not repeat every 188 bytes, an MPEG frame sync with a forbidden bitrate.
  const notTs = Buffer.alloc(600, 0x20);
  notTs[0] = 0x47;
  notTs[188] = 0x47;
  notTs[376] = 0x46;
  assert.notEqual(await detectBytes(notTs, 'upload.bin'), 'ts');
  assert.equal(await detectBytes(Buffer.from([0xff, 0xfd, 0xf4, 0x00, 1, 2, 3, 4]), 'upload.bin'), undefined);
});

test('Typst by its name, or by a leading rule when the name says nothing; never plain text by name (issue 21)', async () => {
  const doc = '// report\n#set page(width: 10cm)\n= Quarterly\n\n#table(columns: 2, [a], [b])\n';
  assert.equal(await detectBytes(doc, 'report.typ'), 'typ');
  assert.equal(await detectBytes(doc, 'upload.bin'), 'typ');
  assert.equal(await detectBytes(doc, ''), 'typ');
  // Markup only a name tells from text: a Typst body that opens with prose is Typst by name, text without.
  assert.equal(await detectBytes('= Quarterly\n\nSome *strong* text.\n', 'notes.typ'), 'typ');
  assert.equal(await detectBytes('= Quarterly\n\nSome *strong* text.\n', 'upload.bin'), 'txt');
  // A name of another text format wins over the sniff; a Markdown heading or a shell script is no Typst.
  assert.equal(await detectBytes(doc, 'notes.txt'), 'txt');
  assert.equal(await detectBytes('# Heading\n\ntext\n', 'upload.bin'), 'txt');
  assert.equal(await detectBytes('#!/bin/sh\n#set -e\necho hi\n', 'upload.bin'), 'txt');
});

test('QOI by its magic and a plausible header, whatever the name; "qoif" with a bad header is not QOI (issue 21)', async () => {
  const head = (channels: number, colorspace: number): Buffer => {
    const b = Buffer.alloc(30);
    b.write('qoif', 0, 'latin1');
    b.writeUInt32BE(2, 4);
    b.writeUInt32BE(2, 8);
    b[12] = channels;
    b[13] = colorspace;
    b.writeUInt8(1, 29);
    return b;
  };
  assert.equal(await detectBytes(head(4, 0), 'picture.qoi'), 'qoi');
  assert.equal(await detectBytes(head(3, 1), 'upload.bin'), 'qoi');
  assert.equal(await detectBytes(head(3, 0), 'photo.png'), 'qoi');
  assert.equal(await detectBytes(head(5, 0), 'picture.qoi'), undefined);
  assert.equal(await detectBytes(head(4, 2), 'picture.qoi'), undefined);
});

// Issue 45: detection runs in the API process on every upload. Three of its patterns backtracked
// exponentially on a few hundred bytes (a netpbm header of many "#" comments, a head of many
// comments before the root element, the same inside gzip). The sizes here took seconds each
// before the fix (and 40 more bytes took hours); now each is one linear pass.
test('hostile heads are classified in linear time: netpbm comments, XML comments and doctype subsets, gzip of them (issue 45)', async () => {
  const { gzipSync } = await import('node:zlib');
  const cases: [string, Buffer | string, string][] = [
    ['netpbm "# " comments', `P1 ${'# '.repeat(27)}x`, 'pbm'],
    ['comments before no root', `${'<!---->'.repeat(24)}!`, 'xml'],
    ['doctype subsets before no root', `${'<!DOCTYPE a[]>'.repeat(24)}!`, 'xml'],
    ['gzip of comments before no svg', gzipSync(`${'<!---->'.repeat(24)}!`), 'svgz'],
  ];
  const times: string[] = [];
  for (const [name, bytes, ext] of cases) {
    const t = performance.now();
    await detectBytes(bytes, `hostile.${ext}`);
    times.push(`${name}: ${Math.round(performance.now() - t)} ms`);
  }
  assert.ok(times.every((t) => Number(/(\d+) ms$/.exec(t)?.[1]) < 200), times.join('; '));
  // What the patterns are for still holds: a commented netpbm header, an SVG after comments and a doctype, gzipped too.
  assert.equal(await detectBytes(`P1\n# made by hand\n# twice\n2 2\n0 1 1 0\n`, 'x.bin'), 'pbm');
  const svg = `<?xml version="1.0"?>\n<!-- a -- b -->\n<!-- c -->\n<!DOCTYPE svg [<!ENTITY w "]">]>\n<svg xmlns="http://www.w3.org/2000/svg"/>`;
  assert.equal(await detectBytes(svg, 'x'), 'svg');
  assert.equal(await detectBytes(gzipSync(svg.replace(' [<!ENTITY w "]">]', '')), 'x'), 'svgz');
});
