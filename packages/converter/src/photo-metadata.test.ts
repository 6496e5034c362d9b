import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter } from './converter.js';
import { packageFile } from './engines/engine.js';
import { tool } from './testing/tools.js';

// Issue 31: photo_metadata. By default an output carries none of the photo's metadata; `keep`
// copies the camera data, dates and authorship without the location, `keep_location` with it.
// What the conversion changed is never copied: the orientation (the pixels are turned), the
// colour profile, the size (a JPEG's EXIF states the output's), thumbnails. Read by exiftool
// (its -validate finds nothing to warn about) and ImageMagick, never by our code: a real iPhone
// XR HEIC (portrait, irot + orientation 6, GPS) and a corpus JPEG tagged orientation 6 with a
// camera, a date, a GPS position and an XMP city by exiftool.
const EXIFTOOL = '/usr/bin/exiftool';
const IPHONE_HEIC = packageFile('test/photos/metadata-extractor-iphone-xr-portrait.heic');
const CORPUS = packageFile('test/corpus');

let converter: Converter;
let work: string;
let tagged: string;
let taggedTiff: string;
const TAGS = [
  '-q', '-overwrite_original', '-n', '-Orientation=6', '-Make=Testcam', '-Model=T-1', '-DateTimeOriginal=2024:05:06 07:08:09', '-Artist=Ada',
  '-GPSLatitude=48.85', '-GPSLatitudeRef=N', '-GPSLongitude=2.35', '-GPSLongitudeRef=E', '-XMP-photoshop:City=Paris',
];
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'photo-metadata-'));
  converter = await Converter.create({ workDir: join(work, 'jobs') });
  // A JPEG (320×240) and a TIFF (512×384) of the corpus, tagged by exiftool.
  tagged = join(work, 'tagged.jpg');
  await copyFile(join(CORPUS, 'jpg/image-rs-progressive-cat.jpg'), tagged);
  tool(EXIFTOOL, [...TAGS, tagged]);
  taggedTiff = join(work, 'tagged.tiff');
  await copyFile(join(CORPUS, 'tiff/image-rs-ycbcr_jpeg_8bit.tif'), taggedTiff);
  tool(EXIFTOOL, [...TAGS, taggedTiff]);
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

async function convert(src: string, from: string, to: string, mode?: string): Promise<{ out: string; engines: readonly string[] }> {
  const input = join(work, `in-${Math.random().toString(36).slice(2)}.${from}`);
  await copyFile(src, input);
  const out = `${input}.${to}`;
  const r = await converter.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out, options: mode ? { photo_metadata: mode } : {} });
  assert.ok(r.ok, `${from} → ${to} (${mode}): ${r.ok ? '' : `${r.error.message} ${r.error.detail ?? ''}`}`);
  return { out, engines: r.engines };
}

/** exiftool's reading of a file: tag name → value (numbers as numbers, -n), every group. */
function tags(path: string): Record<string, unknown> {
  return (JSON.parse(tool(EXIFTOOL, ['-j', '-n', '-a', path])) as Record<string, unknown>[])[0] as Record<string, unknown>;
}

/** exiftool's warnings about a file's metadata, minor ones included. */
function warnings(path: string): string[] {
  return tool(EXIFTOOL, ['-validate', '-warning', '-a', '-s3', path]).trim().split('\n').filter((l) => l && l !== 'OK' && !/^\d+ Warnings?/.test(l));
}

const LOCATED = /^(GPS|City|State|Country|Location)/;

test('keep: camera, date and author copied, no location, no orientation, the EXIF valid and sized as the output (a tagged JPEG → png, webp, avif, tiff; a tagged TIFF → jpg)', { timeout: 120_000 }, async () => {
  const problems: string[] = [];
  for (const [target, from, src, upright] of [['png', 'jpg', tagged, '240×320'], ['webp', 'jpg', tagged, '240×320'], ['avif', 'jpg', tagged, '240×320'], ['tiff', 'jpg', tagged, '240×320'], ['jpg', 'tiff', taggedTiff, '384×512']] as const) {
    const { out, engines } = await convert(src, from, target, 'keep');
    if (engines.at(-1) !== 'exiftool') problems.push(`${target}: engines ${engines.join(',')}`);
    const t = tags(out);
    for (const [k, v] of Object.entries({ Make: 'Testcam', Model: 'T-1', DateTimeOriginal: '2024:05:06 07:08:09', Artist: 'Ada' })) if (t[k] !== v) problems.push(`${target}: ${k} ${String(t[k])}`);
    const located = Object.keys(t).filter((k) => LOCATED.test(k));
    if (located.length) problems.push(`${target}: location tags ${located.join(',')}`);
    if (t.Orientation !== undefined && t.Orientation !== 1) problems.push(`${target}: Orientation ${String(t.Orientation)}`);
    // The pixels were turned once, and no viewer turns them again.
    if (`${String(t.ImageWidth)}×${String(t.ImageHeight)}` !== upright) problems.push(`${target}: ${String(t.ImageWidth)}×${String(t.ImageHeight)}`);
    if (target === 'jpg' && `${String(t.ExifImageWidth)}×${String(t.ExifImageHeight)}` !== upright) problems.push(`jpg: EXIF size ${String(t.ExifImageWidth)}×${String(t.ExifImageHeight)}`);
    const w = warnings(out);
    if (w.length) problems.push(`${target}: ${w.join('; ')}`);
  }
  assert.deepEqual(problems, []);
});

test('the iPhone HEIC → jpg and webp with keep: its date, model and lens, no GPS; keep_location: its GPS position too', { timeout: 180_000 }, async () => {
  const source = tags(IPHONE_HEIC);
  assert.ok(source.GPSLatitude !== undefined && source.LensModel !== undefined, 'the source has a location and a lens');
  const problems: string[] = [];
  for (const target of ['jpg', 'webp']) {
    const { out } = await convert(IPHONE_HEIC, 'heic', target, 'keep');
    const t = tags(out);
    for (const k of ['DateTimeOriginal', 'Model', 'LensModel', 'ExposureTime', 'FNumber']) if (t[k] !== source[k]) problems.push(`${target}: ${k} ${String(t[k])}, not ${String(source[k])}`);
    const located = Object.keys(t).filter((k) => LOCATED.test(k));
    if (located.length) problems.push(`${target}: location tags ${located.join(',')}`);
    if (t.Orientation !== undefined && t.Orientation !== 1) problems.push(`${target}: Orientation ${String(t.Orientation)}`);
    const w = warnings(out);
    if (w.length) problems.push(`${target}: ${w.join('; ')}`);
  }
  const { out } = await convert(IPHONE_HEIC, 'heic', 'jpg', 'keep_location');
  const t = tags(out);
  for (const k of ['GPSLatitude', 'GPSLongitude', 'GPSAltitude']) if (t[k] !== source[k]) problems.push(`keep_location: ${k} ${String(t[k])}, not ${String(source[k])}`);
  assert.deepEqual(problems, []);
});

test('by default (and with strip) nothing of the photo is copied', { timeout: 60_000 }, async () => {
  for (const mode of [undefined, 'strip']) {
    const { out, engines } = await convert(tagged, 'jpg', 'webp', mode);
    assert.ok(!engines.includes('exiftool'));
    const t = tags(out);
    assert.deepEqual(['Make', 'Model', 'DateTimeOriginal', 'Artist', 'GPSLatitude', 'City'].filter((k) => t[k] !== undefined), [], String(mode));
  }
});

test('a picture without metadata converts with keep, exiftool finding nothing to copy', { timeout: 60_000 }, async () => {
  const { out, engines } = await convert(packageFile('test/photos/pillow-heif-rgba-8.heif'), 'heic', 'png', 'keep');
  assert.deepEqual(engines, ['libheif']);
  assert.equal(tool('/usr/bin/identify', ['-format', '%w×%h', out]), '128×128');
});

test('photo_metadata is refused naming the field: an unknown value, a PDF or video target, a document source, split', async () => {
  const refused = async (src: string, from: string, to: string, options: Record<string, unknown>): Promise<string> => {
    const r = await converter.convert({ inputPath: src, sourceFormat: from, targetFormat: to, outputPath: join(work, `refused.${to}`), options });
    assert.ok(!r.ok && r.error.code === 'invalid_request' && r.error.field === 'photo_metadata', `${from} → ${to} ${JSON.stringify(options)}: ${JSON.stringify(r.ok ? r.output : r.error)}`);
    return r.error.message;
  };
  assert.match(await refused(tagged, 'jpg', 'webp', { photo_metadata: 'all' }), /strip, keep, keep_location/);
  await refused(tagged, 'jpg', 'pdf', { photo_metadata: 'keep' });
  await refused(tagged, 'jpg', 'bmp', { photo_metadata: 'keep' });
  await refused(join(CORPUS, 'docx', 'mammoth-comments.docx'), 'docx', 'png', { photo_metadata: 'keep' });
  await refused(tagged, 'jpg', 'png', { photo_metadata: 'keep', split: true });
});
