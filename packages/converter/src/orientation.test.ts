import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter, type ConvertResult } from './converter.js';
import { packageFile } from './engines/engine.js';
import { tool } from './testing/tools.js';

// Issue 31: a photo is turned once. A source tagged EXIF orientation 6 ("Rotate 90 CW") must
// come out with its pixels turned (the sides swapped) and without an orientation other than 1,
// so no viewer turns it again; its EXIF location is not carried over, and exiftool finds
// nothing wrong with the output's metadata. Read by exiftool and poppler, not by our engines.
// The iPhone photo is the file as the phone wrote it (12 MP): its png and webp take most of
// this file's time, so its four conversions start at once, two at a time, while the small
// sources are judged (issue 44).
const CORPUS = packageFile('test/corpus');
const EXIFTOOL = '/usr/bin/exiftool';
/** A real iPhone XR portrait photo: stored 4032×3024, irot 270°, EXIF orientation 6, GPS. */
const IPHONE_HEIC = packageFile('test/photos/metadata-extractor-iphone-xr-portrait.heic');

let converter: Converter;
let work: string;
interface Source { name: string; from: string; path: string; upright: { width: number; height: number } }
const sources: Source[] = [];
const TARGETS = ['jpg', 'png', 'webp', 'pdf'] as const;

/** Each source's conversion to each target, made once (the iPhone photo's started in `before`). */
const conversions = new Map<string, Promise<ConvertResult>>();
function conversion(s: Source, target: string): { out: string; result: Promise<ConvertResult> } {
  const out = join(work, `${s.name.replace(/\W+/g, '-')}.${target}`);
  let result = conversions.get(out);
  if (!result) {
    result = converter.convert({ inputPath: s.path, sourceFormat: s.from, targetFormat: target, outputPath: out });
    conversions.set(out, result);
  }
  return { out, result };
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'orientation-'));
  converter = await Converter.create({ workDir: join(work, 'jobs') });
  // A JPEG (320×240) and a TIFF (512×384) of the corpus, tagged orientation 6 by exiftool.
  const jpg = join(work, 'cat-6.jpg');
  await copyFile(join(CORPUS, 'jpg/image-rs-progressive-cat.jpg'), jpg);
  tool(EXIFTOOL, ['-q', '-overwrite_original', '-n', '-Orientation=6', '-GPSLatitude=48.85', '-GPSLatitudeRef=N', jpg]);
  const tiff = join(work, 'ycbcr-6.tiff');
  await copyFile(join(CORPUS, 'tiff/image-rs-ycbcr_jpeg_8bit.tif'), tiff);
  tool(EXIFTOOL, ['-q', '-overwrite_original', '-n', '-Orientation=6', tiff]);
  // The JPEG as JPEG XL, repacked losslessly (djxl wrote a malformed APP1 from it) and as
  // pixels: cjxl keeps its Exif box either way.
  const repacked = join(work, 'cat-6-repacked.jxl');
  tool('/usr/bin/cjxl', ['--num_threads=1', jpg, repacked]);
  const jxl = join(work, 'cat-6.jxl');
  tool('/usr/bin/cjxl', ['--lossless_jpeg=0', '-d', '1', '--num_threads=1', jpg, jxl]);
  sources.push(
    { name: 'iPhone HEIC', from: 'heic', path: IPHONE_HEIC, upright: { width: 3024, height: 4032 } },
    { name: 'JPEG', from: 'jpg', path: jpg, upright: { width: 240, height: 320 } },
    { name: 'TIFF', from: 'tiff', path: tiff, upright: { width: 384, height: 512 } },
    { name: 'JPEG XL', from: 'jxl', path: jxl, upright: { width: 240, height: 320 } },
    { name: 'JPEG XL (repacked JPEG)', from: 'jxl', path: repacked, upright: { width: 240, height: 320 } },
  );
  // The sources really are tagged 6 (the HEIC also by its irot box).
  for (const s of sources.filter((x) => x.from !== 'jxl')) assert.equal(exif(s.path, 'Orientation'), '6', s.name);
  // The slow ones first, two at a time, not awaited here: each test awaits its own.
  const iphone = sources[0] as Source;
  const queue = ['png', 'webp', 'jpg', 'pdf'];
  const next = async (): Promise<void> => {
    for (let t = queue.shift(); t; t = queue.shift()) await conversion(iphone, t).result;
  };
  void Promise.all([next(), next()]).catch(() => undefined);
});
after(async () => {
  await Promise.allSettled(conversions.values());
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

/** One tag's value as exiftool reads it (`-n`: numbers), '' when absent. */
function exif(path: string, tag: string): string {
  return tool(EXIFTOOL, ['-n', '-s3', `-${tag}`, path]).trim();
}

/** exiftool's warnings on a file (its own reading, and its validation of the metadata: 'OK' when valid). */
function warnings(path: string): string[] {
  return tool(EXIFTOOL, ['-a', '-validate', '-warning', '-s3', path]).split('\n').map((l) => l.trim()).filter((l) => l && l !== 'OK');
}

for (const target of TARGETS) {
  test(`orientation 6 → ${target}: the pixels are turned once, the output says orientation 1 or nothing, keeps no location and has valid metadata`, { timeout: 180_000 }, async () => {
    const problems: string[] = [];
    for (const s of sources) {
      if (s.from === target) continue;
      const { out, result } = conversion(s, target);
      const r = await result;
      if (!r.ok) {
        problems.push(`${s.name} → ${target}: ${r.error.message}`);
        continue;
      }
      const label = `${s.name} → ${target} (${r.engines.join(' > ')})`;
      if (target === 'pdf') {
        // poppler renders the page as a viewer shows it (with any /Rotate): upright.
        const png = `${out}-page`;
        tool('/usr/bin/pdftoppm', ['-r', '8', '-png', '-singlefile', out, png]);
        const [w, h] = tool('/usr/bin/identify', ['-format', '%w %h', `${png}.png`]).split(' ').map(Number);
        if (!(w! < h!)) problems.push(`${label}: page ${w}×${h} is not upright`);
        if (!/^Page rot:\s+0$/m.test(tool('/usr/bin/pdfinfo', [out]))) problems.push(`${label}: the page is turned by /Rotate`);
        continue;
      }
      const size = `${exif(out, 'ImageWidth')}×${exif(out, 'ImageHeight')}`;
      if (size !== `${s.upright.width}×${s.upright.height}`) problems.push(`${label}: ${size}`);
      const orientation = exif(out, 'Orientation');
      if (!['', '1'].includes(orientation)) problems.push(`${label}: orientation ${orientation}`);
      // ImageMagick's reading of the orientation agrees (Undefined or TopLeft).
      const im = tool('/usr/bin/identify', ['-format', '%[orientation]', out]);
      if (!/^(Undefined|TopLeft)$/.test(im)) problems.push(`${label}: identify says ${im}`);
      if (exif(out, 'GPSLatitude') !== '') problems.push(`${label}: the location was carried over`);
      for (const w of warnings(out)) problems.push(`${label}: exiftool: ${w}`);
    }
    assert.deepEqual(problems, []);
  });
}

test('JPEG XL → jpg writes no malformed EXIF segment (exiftool warned on the APP1)', async () => {
  for (const s of sources.filter((x) => x.from === 'jxl')) {
    const out = join(work, `${s.name.replace(/\W+/g, '-')}-app1.jpg`);
    const r = await converter.convert({ inputPath: s.path, sourceFormat: 'jxl', targetFormat: 'jpg', outputPath: out });
    assert.ok(r.ok, s.name);
    assert.doesNotMatch(tool(EXIFTOOL, ['-a', '-warning', out]), /APP1|EXIF/i, s.name);
  }
});

// Issue 31: an upright photo is embedded (img2pdf) or repacked (cjxl) as is, and its EXIF
// went with it: the GPS position was in the PDF's image and in the JPEG XL. Read back by
// poppler (the PDF's JPEG, extracted as stored) and by libjxl's djxl (the JPEG it rebuilds
// from the JPEG XL's reconstruction data), then exiftool.
test('an upright phone photo with a location → pdf and jxl: the location is not carried over, the page size and pixels stay', { timeout: 120_000 }, async () => {
  const jpg = join(work, 'upright-gps.jpg');
  await copyFile(join(CORPUS, 'jpg/image-rs-progressive-cat.jpg'), jpg);
  // As cameras write it: the resolution in the EXIF only (no JFIF header).
  tool(EXIFTOOL, ['-q', '-overwrite_original', '-n', '-JFIF:all=', '-GPSLatitude=48.85', '-GPSLatitudeRef=N', '-EXIF:XResolution=144', '-EXIF:YResolution=144', '-EXIF:ResolutionUnit=2', jpg]);
  assert.equal(exif(jpg, 'GPSLatitude'), '48.85');
  const pdf = join(work, 'upright-gps.pdf');
  assert.ok((await converter.convert({ inputPath: jpg, sourceFormat: 'jpg', targetFormat: 'pdf', outputPath: pdf })).ok);
  tool('/usr/bin/pdfimages', ['-all', pdf, join(work, 'upright-gps-pdf')]);
  const embedded = join(work, 'upright-gps-pdf-000.jpg');
  assert.equal(exif(embedded, 'GPSLatitude'), '', 'no location in the PDF’s JPEG');
  assert.equal(`${exif(embedded, 'ImageWidth')}×${exif(embedded, 'ImageHeight')}`, '320×240', 'the JPEG as it was');
  // The page keeps the size the photo's resolution gives it: 320 × 240 px at 144 dpi as before.
  assert.match(tool('/usr/bin/pdfinfo', [pdf]), /Page size:\s+160 x 120 pts/);

  for (const [name, orientation, upright] of [['upright', 1, '320×240'], ['turned', 6, '240×320']] as const) {
    const src = join(work, `${name}-gps-src.jpg`);
    await copyFile(jpg, src);
    tool(EXIFTOOL, ['-q', '-overwrite_original', '-n', `-Orientation=${orientation}`, src]);
    const jxl = join(work, `${name}-gps.jxl`);
    const r = await converter.convert({ inputPath: src, sourceFormat: 'jpg', targetFormat: 'jxl', outputPath: jxl });
    assert.ok(r.ok, name);
    const rebuilt = join(work, `${name}-gps-rebuilt.jpg`);
    tool('/usr/bin/djxl', ['--num_threads=1', jxl, rebuilt]);
    assert.equal(exif(rebuilt, 'GPSLatitude'), '', `${name}: no location in the JPEG XL`);
    const png = join(work, `${name}-gps.png`);
    tool('/usr/bin/djxl', ['--num_threads=1', jxl, png]);
    assert.equal(tool('/usr/bin/identify', ['-format', '%w×%h', png]), upright, `${name}: shown upright`);
  }
});
